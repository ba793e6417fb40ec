package signalr

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
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
	return appendJSONQuoted(dst, s), nil
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

// appendJSONQuoted writes s as a JSON string, escaping only what JSON
// requires and replacing bytes that are not UTF-8 with U+FFFD.
func appendJSONQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		if c >= utf8.RuneSelf {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = appendJSONEscape(dst, c)
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendJSONEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// appendMsgpackFromJSON transcodes one JSON value (surrounding whitespace
// allowed) to MessagePack. On error dst is returned unchanged.
func appendMsgpackFromJSON(dst, src []byte) ([]byte, error) {
	start := len(dst)
	s := jsonScanner{src: src}
	dst, err := s.value(dst, 0)
	if err == nil {
		s.skipSpace()
		if s.pos != len(src) {
			err = s.errorf("data after the value")
		}
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// jsonScanner is a strict single-pass JSON reader (RFC 8259 grammar) that
// writes MessagePack as it goes.
type jsonScanner struct {
	src []byte
	pos int
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: invalid JSON at offset %d: %s", ErrProtocol, s.pos, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *jsonScanner) consume(c byte) bool {
	s.skipSpace()
	if s.pos < len(s.src) && s.src[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *jsonScanner) value(dst []byte, depth int) ([]byte, error) {
	s.skipSpace()
	if s.pos >= len(s.src) {
		return dst, s.errorf("unexpected end")
	}
	switch c := s.src[s.pos]; {
	case c == '{' || c == '[':
		if depth >= maxValueDepth {
			return dst, s.errorf("nested deeper than %d levels", maxValueDepth)
		}
		return s.container(dst, depth)
	case c == '"':
		return s.string(dst)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(dst)
	}
	return s.literal(dst)
}

func (s *jsonScanner) literal(dst []byte) ([]byte, error) {
	rest := s.src[s.pos:]
	switch {
	case bytes.HasPrefix(rest, []byte("true")):
		s.pos += 4
		return append(dst, mpTrue), nil
	case bytes.HasPrefix(rest, []byte("false")):
		s.pos += 5
		return append(dst, mpFalse), nil
	case bytes.HasPrefix(rest, []byte("null")):
		s.pos += 4
		return append(dst, mpNil), nil
	}
	return dst, s.errorf("unexpected character %q", rest[0])
}

// container reads an array or object. Its element count is only known at
// the end, so one header byte (enough for up to 15 elements, the common
// case) is reserved and widened afterwards if needed.
func (s *jsonScanner) container(dst []byte, depth int) ([]byte, error) {
	isObject := s.src[s.pos] == '{'
	closing, fix, b16 := byte(']'), byte(0x90), byte(mpArray16)
	if isObject {
		closing, fix, b16 = '}', 0x80, mpMap16
	}
	s.pos++
	at := len(dst)
	dst = append(dst, fix)
	if s.consume(closing) {
		return dst, nil
	}
	var err error
	for n := 1; ; n++ {
		if isObject {
			dst, err = s.member(dst, depth)
		} else {
			dst, err = s.value(dst, depth+1)
		}
		switch {
		case err != nil:
			return dst, err
		case s.consume(closing):
			return setContainerHeader(dst, at, fix, b16, n), nil
		case !s.consume(','):
			return dst, s.errorf("want ',' or %q", closing)
		}
	}
}

// member reads one "key": value pair of an object.
func (s *jsonScanner) member(dst []byte, depth int) ([]byte, error) {
	s.skipSpace()
	if s.pos >= len(s.src) || s.src[s.pos] != '"' {
		return dst, s.errorf("want a string key")
	}
	dst, err := s.string(dst)
	if err != nil {
		return dst, err
	}
	if !s.consume(':') {
		return dst, s.errorf("want ':'")
	}
	return s.value(dst, depth+1)
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

func (s *jsonScanner) string(dst []byte) ([]byte, error) {
	s.pos++ // opening quote
	start, escaped := s.pos, false
	for {
		if s.pos >= len(s.src) {
			return dst, s.errorf("unterminated string")
		}
		switch c := s.src[s.pos]; {
		case c == '"':
			raw := s.src[start:s.pos]
			s.pos++
			if !escaped {
				return append(appendMsgpackStrHeader(dst, len(raw)), raw...), nil
			}
			return s.unescape(dst, raw)
		case c == '\\':
			escaped = true
			s.pos += 2
		case c < 0x20:
			return dst, s.errorf("control character 0x%02x in string", c)
		default:
			s.pos++
		}
	}
}

// unescape writes a string with escapes. Its decoded length is at most
// len(raw), so the header is sized for that and shrunk afterwards.
func (s *jsonScanner) unescape(dst, raw []byte) ([]byte, error) {
	at, h := len(dst), msgpackStrHeaderLen(len(raw))
	dst = append(dst, 0, 0, 0, 0, 0)[:at+h]
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		var n int
		var ok bool
		if dst, n, ok = appendJSONEscaped(dst, raw[i:]); !ok {
			return dst[:at], s.errorf("invalid escape %q", raw[i:min(i+6, len(raw))])
		}
		i += n
	}
	size := len(dst) - at - h
	if nh := msgpackStrHeaderLen(size); nh != h {
		copy(dst[at+nh:], dst[at+h:])
		dst, h = dst[:at+nh+size], nh
	}
	putMsgpackStrHeader(dst[at:at+h], size)
	return dst, nil
}

// appendJSONEscaped decodes the escape at the start of esc, returning how
// many bytes it used. Unpaired surrogates become U+FFFD, as in encoding/json.
func appendJSONEscaped(dst, esc []byte) ([]byte, int, bool) {
	if len(esc) < 2 {
		return dst, 0, false
	}
	switch esc[1] {
	case '"', '\\', '/':
		return append(dst, esc[1]), 2, true
	case 'b':
		return append(dst, '\b'), 2, true
	case 'f':
		return append(dst, '\f'), 2, true
	case 'n':
		return append(dst, '\n'), 2, true
	case 'r':
		return append(dst, '\r'), 2, true
	case 't':
		return append(dst, '\t'), 2, true
	case 'u':
		r, ok := hex4(esc[2:])
		if !ok {
			return dst, 0, false
		}
		if utf16.IsSurrogate(r) && len(esc) >= 12 && esc[6] == '\\' && esc[7] == 'u' {
			if r2, ok := hex4(esc[8:]); ok {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					return utf8.AppendRune(dst, pair), 12, true
				}
			}
		}
		return utf8.AppendRune(dst, r), 6, true
	}
	return dst, 0, false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number writes integers that fit 64 bits as int/uint and everything else
// (fractions, exponents, -0, huge integers) as float64.
func (s *jsonScanner) number(dst []byte) ([]byte, error) {
	start := s.pos
	neg := s.consumeByte('-')
	digits := s.pos
	switch {
	case s.consumeByte('0'):
	case s.digits() == 0:
		return dst, s.errorf("malformed number")
	}
	intEnd, isFloat := s.pos, false
	if s.consumeByte('.') {
		if s.digits() == 0 {
			return dst, s.errorf("malformed number")
		}
		isFloat = true
	}
	if s.consumeByte('e') || s.consumeByte('E') {
		if !s.consumeByte('+') {
			s.consumeByte('-')
		}
		if s.digits() == 0 {
			return dst, s.errorf("malformed exponent")
		}
		isFloat = true
	}
	if !isFloat {
		if v, ok := parseDecimal(s.src[digits:intEnd]); ok {
			switch {
			case !neg:
				return appendMsgpackUint(dst, v), nil
			case v != 0 && v <= 1<<63:
				return appendMsgpackInt(dst, -int64(v)), nil
			}
		}
	}
	f, err := strconv.ParseFloat(string(s.src[start:s.pos]), 64)
	if err != nil {
		return dst, s.errorf("number %s is out of range", s.src[start:s.pos])
	}
	return appendMsgpackFloat64(dst, f), nil
}

func (s *jsonScanner) consumeByte(c byte) bool {
	if s.pos < len(s.src) && s.src[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

func (s *jsonScanner) digits() int {
	start := s.pos
	for s.pos < len(s.src) && s.src[s.pos] >= '0' && s.src[s.pos] <= '9' {
		s.pos++
	}
	return s.pos - start
}

// parseDecimal parses ASCII digits into a uint64, failing on overflow.
func parseDecimal(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
