package signalr

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The MessagePack subset the hub protocol needs is small, so it is read and
// written by hand: append-style writers and a bounds-checked reader over one
// message body, with no reflection and no intermediate Go values.

// MessagePack format bytes (github.com/msgpack/msgpack spec.md, "Formats").
const (
	mpNil      = 0xc0
	mpFalse    = 0xc2
	mpTrue     = 0xc3
	mpBin8     = 0xc4
	mpBin16    = 0xc5
	mpBin32    = 0xc6
	mpExt8     = 0xc7
	mpExt16    = 0xc8
	mpExt32    = 0xc9
	mpFloat32  = 0xca
	mpFloat64  = 0xcb
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpInt8     = 0xd0
	mpInt16    = 0xd1
	mpInt32    = 0xd2
	mpInt64    = 0xd3
	mpFixExt1  = 0xd4
	mpFixExt16 = 0xd8
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
	mpArray16  = 0xdc
	mpArray32  = 0xdd
	mpMap16    = 0xde
	mpMap32    = 0xdf
)

// maxValueDepth bounds the nesting of arrays and maps in one value, so that
// a hostile frame of N opening bytes cannot drive N levels of recursion.
const maxValueDepth = 1000

var (
	errMsgpackTruncated = fmt.Errorf("%w: MessagePack value is truncated", ErrProtocol)
	errMsgpackTooDeep   = fmt.Errorf("%w: MessagePack value nests deeper than %d levels", ErrProtocol, maxValueDepth)
)

func appendMsgpackNil(dst []byte) []byte { return append(dst, mpNil) }

func appendMsgpackBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, mpTrue)
	}
	return append(dst, mpFalse)
}

// appendMsgpackUint writes v in the smallest unsigned format.
func appendMsgpackUint(dst []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(dst, byte(v))
	case v <= math.MaxUint8:
		return append(dst, mpUint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, mpUint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, mpUint32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, mpUint64), v)
}

// appendMsgpackInt writes v in the smallest format; non-negative values use
// the unsigned formats, as most encoders do.
func appendMsgpackInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendMsgpackUint(dst, uint64(v))
	case v >= -32:
		return append(dst, byte(int8(v)))
	case v >= math.MinInt8:
		return append(dst, mpInt8, byte(int8(v)))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, mpInt16), uint16(int16(v)))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, mpInt32), uint32(int32(v)))
	}
	return binary.BigEndian.AppendUint64(append(dst, mpInt64), uint64(v))
}

func appendMsgpackFloat64(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, mpFloat64), math.Float64bits(f))
}

// msgpackStrHeaderLen is the size of the str header for a string of n bytes.
func msgpackStrHeaderLen(n int) int {
	switch {
	case n < 32:
		return 1
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// putMsgpackStrHeader writes a str header of exactly len(b) bytes (as chosen
// by msgpackStrHeaderLen) for a string of n bytes.
func putMsgpackStrHeader(b []byte, n int) {
	switch len(b) {
	case 1:
		b[0] = 0xa0 | byte(n)
	case 2:
		b[0], b[1] = mpStr8, byte(n)
	case 3:
		b[0] = mpStr16
		binary.BigEndian.PutUint16(b[1:], uint16(n))
	default:
		b[0] = mpStr32
		binary.BigEndian.PutUint32(b[1:], uint32(n))
	}
}

func appendMsgpackStrHeader(dst []byte, n int) []byte {
	h := msgpackStrHeaderLen(n)
	dst = append(dst, 0, 0, 0, 0, 0)[:len(dst)+h]
	putMsgpackStrHeader(dst[len(dst)-h:], n)
	return dst
}

func appendMsgpackString(dst []byte, s string) []byte {
	return append(appendMsgpackStrHeader(dst, len(s)), s...)
}

// appendMsgpackContainerHeader writes an array (fix 0x90) or map (fix 0x80)
// header for n elements or pairs.
func appendMsgpackContainerHeader(dst []byte, fix, b16 byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, fix|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, b16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, b16+1), uint32(n))
}

func appendMsgpackArrayHeader(dst []byte, n int) []byte {
	return appendMsgpackContainerHeader(dst, 0x90, mpArray16, n)
}

func appendMsgpackMapHeader(dst []byte, n int) []byte {
	return appendMsgpackContainerHeader(dst, 0x80, mpMap16, n)
}

// msgpackReader reads MessagePack values from one message body. Every read
// checks the bytes that remain, so a length taken from the wire is never
// trusted before it is known to fit.
type msgpackReader struct {
	buf []byte
	off int
}

func (r *msgpackReader) remaining() int { return len(r.buf) - r.off }

func (r *msgpackReader) peek() (byte, error) {
	if r.off >= len(r.buf) {
		return 0, errMsgpackTruncated
	}
	return r.buf[r.off], nil
}

// skipNil consumes the next value if it is nil.
func (r *msgpackReader) skipNil() (bool, error) {
	c, err := r.peek()
	if err != nil || c != mpNil {
		return false, err
	}
	r.off++
	return true, nil
}

func (r *msgpackReader) readByte() (byte, error) {
	c, err := r.peek()
	if err == nil {
		r.off++
	}
	return c, err
}

// take returns the next n bytes without copying them.
func (r *msgpackReader) take(n uint64) ([]byte, error) {
	if n > uint64(r.remaining()) {
		return nil, errMsgpackTruncated
	}
	b := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// readBigEndian reads an n-byte (1, 2, 4 or 8) big-endian unsigned number.
func (r *msgpackReader) readBigEndian(n uint64) (uint64, error) {
	b, err := r.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// readArrayLen reads an array header. The count is checked against the
// bytes left (every element takes at least one), so callers may size a
// slice from it.
func (r *msgpackReader) readArrayLen() (int, error) {
	c, err := r.readByte()
	if err != nil {
		return 0, err
	}
	return r.arrayLenAfter(c)
}

func (r *msgpackReader) arrayLenAfter(c byte) (int, error) {
	var n uint64
	var err error
	switch {
	case c&0xf0 == 0x90:
		n = uint64(c & 0x0f)
	case c == mpArray16:
		n, err = r.readBigEndian(2)
	case c == mpArray32:
		n, err = r.readBigEndian(4)
	default:
		return 0, r.typeError(c, "an array")
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(r.remaining()) {
		return 0, errMsgpackTruncated
	}
	return int(n), nil
}

// readMapLen reads a map header; like readArrayLen it checks the count
// against the bytes left (two per pair at least).
func (r *msgpackReader) readMapLen() (int, error) {
	c, err := r.readByte()
	if err != nil {
		return 0, err
	}
	return r.mapLenAfter(c)
}

func (r *msgpackReader) mapLenAfter(c byte) (int, error) {
	var n uint64
	var err error
	switch {
	case c&0xf0 == 0x80:
		n = uint64(c & 0x0f)
	case c == mpMap16:
		n, err = r.readBigEndian(2)
	case c == mpMap32:
		n, err = r.readBigEndian(4)
	default:
		return 0, r.typeError(c, "a map")
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(r.remaining())/2 {
		return 0, errMsgpackTruncated
	}
	return int(n), nil
}

// strLenAfter returns the length of a str whose format byte c was just
// read, and false if c is not a str format.
func (r *msgpackReader) strLenAfter(c byte) (uint64, bool, error) {
	switch {
	case c&0xe0 == 0xa0:
		return uint64(c & 0x1f), true, nil
	case c == mpStr8:
		n, err := r.readBigEndian(1)
		return n, true, err
	case c == mpStr16:
		n, err := r.readBigEndian(2)
		return n, true, err
	case c == mpStr32:
		n, err := r.readBigEndian(4)
		return n, true, err
	}
	return 0, false, nil
}

// readStringOrNil reads a str (returned without copying, ok=true) or a nil
// (ok=false). Anything else is a protocol error.
func (r *msgpackReader) readStringOrNil(what string) (s []byte, ok bool, err error) {
	c, err := r.readByte()
	if err != nil {
		return nil, false, err
	}
	if c == mpNil {
		return nil, false, nil
	}
	n, isStr, err := r.strLenAfter(c)
	if err != nil {
		return nil, false, err
	}
	if !isStr {
		return nil, false, r.typeError(c, what)
	}
	s, err = r.take(n)
	return s, err == nil, err
}

func (r *msgpackReader) readString(what string) (string, error) {
	s, ok, err := r.readStringOrNil(what)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %s is nil, want a string", ErrProtocol, what)
	}
	return string(s), err
}

// readInt reads any integer format whose value fits an int64.
func (r *msgpackReader) readInt(what string) (int64, error) {
	c, err := r.readByte()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c >= mpUint8 && c <= mpUint64:
		v, err := r.readBigEndian(1 << (c - mpUint8))
		if err == nil && v > math.MaxInt64 {
			err = fmt.Errorf("%w: %s %d is out of range", ErrProtocol, what, v)
		}
		return int64(v), err
	case c >= mpInt8 && c <= mpInt64:
		size := uint64(1) << (c - mpInt8)
		v, err := r.readBigEndian(size)
		return signExtend(v, size), err
	}
	return 0, r.typeError(c, what)
}

// readUint reads any integer format holding a non-negative value; encoders
// may write small positive numbers in signed formats.
func (r *msgpackReader) readUint(what string) (uint64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if c >= mpUint8 && c <= mpUint64 {
		r.off++
		return r.readBigEndian(1 << (c - mpUint8))
	}
	v, err := r.readInt(what)
	if err == nil && v < 0 {
		err = fmt.Errorf("%w: %s %d is negative", ErrProtocol, what, v)
	}
	return uint64(v), err
}

func signExtend(v, size uint64) int64 {
	shift := 64 - 8*size
	return int64(v<<shift) >> shift
}

func (r *msgpackReader) readBool(what string) (bool, error) {
	c, err := r.readByte()
	switch {
	case err != nil:
		return false, err
	case c == mpTrue:
		return true, nil
	case c == mpFalse:
		return false, nil
	}
	return false, r.typeError(c, what)
}

// skip moves past one value of any type, checking that it is well formed.
func (r *msgpackReader) skip(depth int) error {
	if depth > maxValueDepth {
		return errMsgpackTooDeep
	}
	c, err := r.readByte()
	if err != nil {
		return err
	}
	if n, isStr, err := r.strLenAfter(c); isStr || err != nil {
		if err == nil {
			_, err = r.take(n)
		}
		return err
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == mpNil || c == mpFalse || c == mpTrue:
		return nil
	case c&0xf0 == 0x90 || c == mpArray16 || c == mpArray32:
		n, err := r.arrayLenAfter(c)
		return r.skipN(n, depth, err)
	case c&0xf0 == 0x80 || c == mpMap16 || c == mpMap32:
		n, err := r.mapLenAfter(c)
		return r.skipN(2*n, depth, err)
	case c == mpFloat32 || c == mpFloat64:
		_, err := r.take(uint64(4) << (c - mpFloat32))
		return err
	case c >= mpUint8 && c <= mpInt64:
		_, err := r.take(1 << ((c - mpUint8) & 3))
		return err
	case c >= mpBin8 && c <= mpBin32:
		n, err := r.readBigEndian(1 << (c - mpBin8))
		if err == nil {
			_, err = r.take(n)
		}
		return err
	case c >= mpExt8 && c <= mpExt32 || c >= mpFixExt1 && c <= mpFixExt16:
		_, _, err := r.readExt(c)
		return err
	}
	return r.typeError(c, "a value")
}

func (r *msgpackReader) skipN(n, depth int, err error) error {
	for i := 0; i < n && err == nil; i++ {
		err = r.skip(depth + 1)
	}
	return err
}

// readExt reads the type and data of an ext or fixext value whose format
// byte c was just read.
func (r *msgpackReader) readExt(c byte) (typ int8, data []byte, err error) {
	var n uint64
	if c >= mpFixExt1 && c <= mpFixExt16 {
		n = 1 << (c - mpFixExt1)
	} else if n, err = r.readBigEndian(1 << (c - mpExt8)); err != nil {
		return 0, nil, err
	}
	t, err := r.readByte()
	if err != nil {
		return 0, nil, err
	}
	data, err = r.take(n)
	return int8(t), data, err
}

// typeError names the format found where another was expected.
func (r *msgpackReader) typeError(c byte, want string) error {
	return fmt.Errorf("%w: MessagePack format 0x%02x at offset %d, want %s", ErrProtocol, c, r.off-1, want)
}
