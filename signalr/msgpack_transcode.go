package signalr

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// Message values stay JSON text whatever the hub protocol, so scenarios and
// the hub never see MessagePack. MessagePackProtocol converts them at the
// edge, straight from one byte form to the other:
//
//	JSON                      MessagePack
//	object                    map with str keys
//	array                     array
//	string                    str
//	integer in int64/uint64   smallest int or uint format
//	-0, other numbers         float64 (integers beyond 64 bits lose precision)
//	true, false, null         true, false, nil
//
// and back, where MessagePack has more kinds than JSON:
//
//	float32, float64          number (NaN and ±Inf are a protocol error)
//	bin                       base64 string (standard alphabet, padded), the
//	                          JSON protocol's form of a byte array
//	timestamp (ext -1)        RFC 3339 string in UTC, e.g. "2024-05-01T12:00:00.5Z"
//	other ext types           protocol error
//	map key str               the same string
//	map key int or uint       its decimal text, as JSON writers do for
//	                          integer-keyed dictionaries
//	other map keys            protocol error
//	str with invalid UTF-8    each bad byte becomes U+FFFD
//
// The JSON written is compact and canonical (no spaces, minimal escapes), so
// a value decoded, encoded and decoded again reads back byte for byte.

// appendJSONValue reads one MessagePack value and appends it as JSON text.
func (r *msgpackReader) appendJSONValue(dst []byte, depth int) ([]byte, error) {
	if depth > maxValueDepth {
		return dst, errMsgpackTooDeep
	}
	c, err := r.readByte()
	if err != nil {
		return dst, err
	}
	if n, isStr, err := r.strLenAfter(c); isStr || err != nil {
		return r.appendJSONStr(dst, n, err)
	}
	switch {
	case isMsgpackInteger(c):
		return r.appendIntegerText(dst, c)
	case c&0xf0 == 0x90 || c == mpArray16 || c == mpArray32:
		n, err := r.arrayLenAfter(c)
		if err != nil {
			return dst, err
		}
		return r.appendJSONArray(dst, n, depth)
	case c&0xf0 == 0x80 || c == mpMap16 || c == mpMap32:
		n, err := r.mapLenAfter(c)
		if err != nil {
			return dst, err
		}
		return r.appendJSONObject(dst, n, depth)
	}
	return r.appendJSONScalar(dst, c)
}

func isMsgpackInteger(c byte) bool {
	return c <= 0x7f || c >= 0xe0 || c >= mpUint8 && c <= mpInt64
}

func (r *msgpackReader) appendJSONStr(dst []byte, n uint64, err error) ([]byte, error) {
	if err != nil {
		return dst, err
	}
	s, err := r.take(n)
	if err != nil {
		return dst, err
	}
	return jsonscan.AppendQuoted(dst, s), nil
}

// appendJSONScalar handles the formats with no JSON counterpart of the same
// name: nil, booleans, floats, bin and ext.
func (r *msgpackReader) appendJSONScalar(dst []byte, c byte) ([]byte, error) {
	switch {
	case c == mpNil:
		return append(dst, "null"...), nil
	case c == mpFalse:
		return append(dst, "false"...), nil
	case c == mpTrue:
		return append(dst, "true"...), nil
	case c == mpFloat32:
		bits, err := r.readBigEndian(4)
		if err != nil {
			return dst, err
		}
		return appendJSONFloat(dst, float64(math.Float32frombits(uint32(bits))), 32)
	case c == mpFloat64:
		bits, err := r.readBigEndian(8)
		if err != nil {
			return dst, err
		}
		return appendJSONFloat(dst, math.Float64frombits(bits), 64)
	case c >= mpBin8 && c <= mpBin32:
		n, err := r.readBigEndian(1 << (c - mpBin8))
		if err != nil {
			return dst, err
		}
		b, err := r.take(n)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '"')
		return append(base64.StdEncoding.AppendEncode(dst, b), '"'), nil
	case c >= mpExt8 && c <= mpExt32 || c >= mpFixExt1 && c <= mpFixExt16:
		return r.appendJSONExt(dst, c)
	}
	return dst, r.typeError(c, "a value")
}

// appendIntegerText appends the decimal text of the integer whose format
// byte c was just read.
func (r *msgpackReader) appendIntegerText(dst []byte, c byte) ([]byte, error) {
	switch {
	case c <= 0x7f:
		return strconv.AppendUint(dst, uint64(c), 10), nil
	case c >= 0xe0:
		return strconv.AppendInt(dst, int64(int8(c)), 10), nil
	case c <= mpUint64:
		v, err := r.readBigEndian(1 << (c - mpUint8))
		return strconv.AppendUint(dst, v, 10), err
	}
	size := uint64(1) << (c - mpInt8)
	v, err := r.readBigEndian(size)
	return strconv.AppendInt(dst, signExtend(v, size), 10), err
}

func (r *msgpackReader) appendJSONArray(dst []byte, n, depth int) ([]byte, error) {
	dst = append(dst, '[')
	var err error
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = r.appendJSONValue(dst, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

func (r *msgpackReader) appendJSONObject(dst []byte, n, depth int) ([]byte, error) {
	dst = append(dst, '{')
	var err error
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = r.appendJSONKey(dst); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = r.appendJSONValue(dst, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendJSONKey accepts str keys and stringifies integer keys; any other
// key has no faithful JSON form.
func (r *msgpackReader) appendJSONKey(dst []byte) ([]byte, error) {
	c, err := r.readByte()
	if err != nil {
		return dst, err
	}
	if n, isStr, err := r.strLenAfter(c); isStr || err != nil {
		return r.appendJSONStr(dst, n, err)
	}
	if !isMsgpackInteger(c) {
		return dst, r.typeError(c, "a string or integer map key")
	}
	dst = append(dst, '"')
	dst, err = r.appendIntegerText(dst, c)
	return append(dst, '"'), err
}

// appendJSONFloat writes f the way JavaScript prints numbers: plain decimals
// for ordinary magnitudes, an exponent for tiny and huge ones, and the
// shortest digits that read back as the same float32 or float64.
func appendJSONFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("%w: MessagePack float %v has no JSON form", ErrProtocol, f)
	}
	// The thresholds are compared at the value's own precision: float32(1e-6)
	// is just below 1e-6, and must print as 0.000001 like its float64 twin.
	abs, small, large := math.Abs(f), 1e-6, 1e21
	if bits == 32 {
		small, large = float64(float32(small)), float64(float32(large))
	}
	format := byte('f')
	if abs != 0 && (abs < small || abs >= large) {
		format = 'e'
	}
	return strconv.AppendFloat(dst, f, format, -1, bits), nil
}

// Timestamp extension (type -1) bounds: .NET's DateTime range, years 1-9999.
const (
	msgpackTimestampType = -1
	minTimestampSeconds  = -62135596800
	maxTimestampSeconds  = 253402300799
)

func (r *msgpackReader) appendJSONExt(dst []byte, c byte) ([]byte, error) {
	typ, data, err := r.readExt(c)
	if err != nil {
		return dst, err
	}
	if typ != msgpackTimestampType {
		return dst, fmt.Errorf("%w: MessagePack extension type %d has no JSON form", ErrProtocol, typ)
	}
	t, err := decodeMsgpackTimestamp(data)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '"')
	return append(t.AppendFormat(dst, time.RFC3339Nano), '"'), nil
}

// decodeMsgpackTimestamp reads the 32-, 64- and 96-bit timestamp layouts.
func decodeMsgpackTimestamp(data []byte) (time.Time, error) {
	var sec int64
	var nsec uint32
	switch len(data) {
	case 4:
		sec = int64(binary.BigEndian.Uint32(data))
	case 8:
		v := binary.BigEndian.Uint64(data)
		nsec, sec = uint32(v>>34), int64(v&(1<<34-1))
	case 12:
		nsec, sec = binary.BigEndian.Uint32(data), int64(binary.BigEndian.Uint64(data[4:]))
	default:
		return time.Time{}, fmt.Errorf("%w: MessagePack timestamp of %d bytes", ErrProtocol, len(data))
	}
	if nsec >= 1e9 || sec < minTimestampSeconds || sec > maxTimestampSeconds {
		return time.Time{}, fmt.Errorf("%w: MessagePack timestamp %d.%09d is out of range", ErrProtocol, sec, nsec)
	}
	return time.Unix(sec, int64(nsec)).UTC(), nil
}

// appendMsgpackFromJSON transcodes one JSON value (surrounding white space
// allowed) to MessagePack. It reads with the JSON protocol's validating
// scanner, so it accepts exactly what encoding/json accepts, except numbers
// beyond float64 and nesting beyond maxValueDepth. On error dst is returned
// unchanged.
func appendMsgpackFromJSON(dst, src []byte) ([]byte, error) {
	start := len(dst)
	t := jsonTranscoder{s: jsonscan.New(src, maxValueDepth)}
	dst, err := t.value(dst)
	if err == nil {
		err = t.s.End()
	}
	if err != nil {
		return dst[:start], jsonValueError(err)
	}
	return dst, nil
}

var errJSONTooDeep = fmt.Errorf("%w: JSON value nested deeper than %d levels", ErrProtocol, maxValueDepth)

// jsonValueError phrases the scanner's errors for a value read outside a
// record.
func jsonValueError(err error) error {
	se, ok := err.(*jsonscan.SyntaxError)
	switch {
	case !ok:
		return err
	case se.TooDeep:
		return errJSONTooDeep
	}
	return fmt.Errorf("%w: invalid JSON value: %s", ErrProtocol, se)
}

// jsonTranscoder writes MessagePack as its scanner reads the JSON.
type jsonTranscoder struct {
	s jsonscan.Scanner
}

func (t *jsonTranscoder) value(dst []byte) ([]byte, error) {
	s := &t.s
	switch c := s.Peek(); {
	case c == '{' || c == '[':
		return t.container(dst, c == '{')
	case c == '"':
		content, plain, err := s.ScanString()
		return appendMsgpackJSONString(dst, content, plain), err
	case jsonscan.BeginsNumber(c):
		return t.number(dst)
	case c == 't':
		return append(dst, mpTrue), s.ScanLiteral("true")
	case c == 'f':
		return append(dst, mpFalse), s.ScanLiteral("false")
	case c == 'n':
		return append(dst, mpNil), s.ScanLiteral("null")
	}
	return dst, s.Fail("looking for beginning of value")
}

// container reads an array or object. Its element count is only known at
// the end, so one header byte (enough for up to 15 elements, the common
// case) is reserved and widened afterwards if needed. The scanner counts
// the nesting, up to maxValueDepth.
func (t *jsonTranscoder) container(dst []byte, isObject bool) ([]byte, error) {
	s := &t.s
	closer, fix, b16 := byte(']'), byte(0x90), byte(mpArray16)
	if isObject {
		closer, fix, b16 = '}', 0x80, mpMap16
	}
	if err := s.Open(); err != nil {
		return dst, err
	}
	at := len(dst)
	dst = append(dst, fix)
	if s.CloseIfEmpty(closer) {
		return dst, nil
	}
	for n := 1; ; n++ {
		if isObject {
			name, plain, err := s.Key()
			if err != nil {
				return dst, err
			}
			dst = appendMsgpackJSONString(dst, name, plain)
		}
		var err error
		if dst, err = t.value(dst); err != nil {
			return dst, err
		}
		if done, err := s.Next(closer); done {
			return setContainerHeader(dst, at, fix, b16, n), err
		}
	}
}

// setContainerHeader writes the header for n elements at dst[at], moving
// the elements right when the header needs more than the reserved byte.
func setContainerHeader(dst []byte, at int, fix, b16 byte, n int) []byte {
	if n < 16 {
		dst[at] = fix | byte(n)
		return dst
	}
	var hdr [5]byte
	h := appendMsgpackContainerHeader(hdr[:0], fix, b16, n)
	body := len(dst) - at - 1
	dst = append(dst, hdr[1:len(h)]...)
	copy(dst[at+len(h):], dst[at+1:at+1+body])
	copy(dst[at:], h)
	return dst
}

// appendMsgpackJSONString writes the value of scanned string content. A
// plain one is copied; otherwise its header is sized for the content's
// length, and moved once the decoded value's length is known (escapes
// shrink it, U+FFFD for an invalid byte grows it).
func appendMsgpackJSONString(dst, content []byte, plain bool) []byte {
	if plain {
		return append(appendMsgpackStrHeader(dst, len(content)), content...)
	}
	at, h := len(dst), msgpackStrHeaderLen(len(content))
	dst = jsonscan.AppendUnquoted(append(dst, 0, 0, 0, 0, 0)[:at+h], content)
	size := len(dst) - at - h
	if nh := msgpackStrHeaderLen(size); nh != h {
		dst = append(dst, 0, 0, 0, 0)[:max(len(dst), at+nh+size)]
		copy(dst[at+nh:], dst[at+h:at+h+size])
		dst, h = dst[:at+nh+size], nh
	}
	putMsgpackStrHeader(dst[at:at+h], size)
	return dst
}

// number writes integers that fit 64 bits as int/uint and everything else
// (fractions, exponents, -0, huge integers) as float64.
func (t *jsonTranscoder) number(dst []byte) ([]byte, error) {
	text, integer, err := t.s.ScanNumber()
	if err != nil {
		return dst, err
	}
	if integer {
		digits, neg := text, text[0] == '-'
		if neg {
			digits = text[1:]
		}
		if v, ok := jsonscan.ParseUint(digits); ok {
			switch {
			case !neg:
				return appendMsgpackUint(dst, v), nil
			case v != 0 && v <= 1<<63:
				return appendMsgpackInt(dst, -int64(v)), nil
			}
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return dst, fmt.Errorf("%w: JSON number %s is out of range", ErrProtocol, text)
	}
	return appendMsgpackFloat64(dst, f), nil
}
