package signalr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is the nesting limit of encoding/json, kept so that the
// scanner rejects exactly the records encoding/json rejects.
const maxJSONDepth = 10000

// jsonScanner is hubprobe's one JSON reader: it validates in a single pass,
// with the grammar encoding/json accepts (only ' ', '\t', '\n', '\r' as
// white space, no control bytes inside strings, and any other byte, even
// invalid UTF-8, allowed in strings). The JSON protocol's records, the
// MessagePack transcoder's input and the values the hub reads inside
// arguments all go through it.
type jsonScanner struct {
	data  []byte
	pos   int
	depth int
	// inValue marks the scan of one value outside a record (a MessagePack
	// argument, a hub payload), which errors name as such.
	inValue bool
}

// fail reports the byte at pos as encoding/json's scanner would, with
// context saying what was expected there.
func (s *jsonScanner) fail(context string) error {
	if s.pos >= len(s.data) {
		return s.syntaxError("unexpected end of JSON input")
	}
	return s.syntaxError("invalid character " + quoteChar(s.data[s.pos]) + " " + context)
}

// failInToken is fail inside a literal, a number or an escape, where
// encoding/json's scanner ends the input with a space that it then rejects.
func (s *jsonScanner) failInToken(context string) error {
	c := byte(' ')
	if s.pos < len(s.data) {
		c = s.data[s.pos]
	}
	return s.syntaxError("invalid character " + quoteChar(c) + " " + context)
}

func (s *jsonScanner) syntaxError(msg string) error {
	if s.inValue {
		return fmt.Errorf("%w: invalid JSON value: %s", ErrProtocol, msg)
	}
	return jsonSyntaxError(msg)
}

func jsonSyntaxError(msg string) error {
	return fmt.Errorf("%w: invalid JSON record: %s", ErrProtocol, msg)
}

// quoteChar formats c as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

func (s *jsonScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, or 0 at the end; a NUL
// byte outside a string is invalid wherever peek is used.
func (s *jsonScanner) peek() byte {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// atEnd checks that only white space follows the value just scanned.
func (s *jsonScanner) atEnd() error {
	if s.skipSpace(); s.pos != len(s.data) {
		return s.fail("after top-level value")
	}
	return nil
}

func (s *jsonScanner) expect(c byte, what string) error {
	if s.peek() != c {
		return s.fail(what)
	}
	s.pos++
	return nil
}

// open consumes the '{' or '[' under pos and counts the nesting level.
func (s *jsonScanner) open() error {
	s.depth++
	if s.depth > maxJSONDepth {
		return s.fail("exceeded max depth")
	}
	s.pos++
	return nil
}

// closeIfEmpty consumes closer if it comes next, ending the container.
func (s *jsonScanner) closeIfEmpty(closer byte) bool {
	if s.peek() != closer {
		return false
	}
	s.pos++
	s.depth--
	return true
}

// next consumes ',' (another member follows) or closer (the container
// ended, done is true).
func (s *jsonScanner) next(closer byte) (done bool, err error) {
	switch s.peek() {
	case ',':
		s.pos++
		return false, nil
	case closer:
		s.pos++
		s.depth--
		return true, nil
	}
	if closer == '}' {
		return true, s.fail("after object key:value pair")
	}
	return true, s.fail("after array element")
}

// key consumes a member name and the colon after it.
func (s *jsonScanner) key() (name []byte, plain bool, err error) {
	if s.peek() != '"' {
		return nil, false, s.fail("looking for beginning of object key string")
	}
	if name, plain, err = s.scanString(); err != nil {
		return nil, false, err
	}
	return name, plain, s.expect(':', "after object key")
}

// skipValue validates one value of any kind and returns where it lies.
func (s *jsonScanner) skipValue() (start, end int, err error) {
	c := s.peek()
	start = s.pos
	switch {
	case c == '{':
		err = s.skipObject()
	case c == '[':
		err = s.skipArray()
	case c == '"':
		_, _, err = s.scanString()
	case c == '-' || isDigit(c):
		_, err = s.scanNumber()
	case c == 't':
		err = s.scanLiteral("true")
	case c == 'f':
		err = s.scanLiteral("false")
	case c == 'n':
		err = s.scanLiteral("null")
	default:
		err = s.fail("looking for beginning of value")
	}
	return start, s.pos, err
}

func (s *jsonScanner) skipObject() error {
	if err := s.open(); err != nil || s.closeIfEmpty('}') {
		return err
	}
	for {
		if _, _, err := s.key(); err != nil {
			return err
		}
		if _, _, err := s.skipValue(); err != nil {
			return err
		}
		if done, err := s.next('}'); done {
			return err
		}
	}
}

func (s *jsonScanner) skipArray() error {
	if err := s.open(); err != nil || s.closeIfEmpty(']') {
		return err
	}
	for {
		if _, _, err := s.skipValue(); err != nil {
			return err
		}
		if done, err := s.next(']'); done {
			return err
		}
	}
}

// scanLiteral consumes true, false or null; the caller has seen its first
// byte.
func (s *jsonScanner) scanLiteral(lit string) error {
	if bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		s.pos += len(lit)
		return nil
	}
	for i := 1; i < len(lit); i++ {
		if s.pos+i >= len(s.data) || s.data[s.pos+i] != lit[i] {
			s.pos += i
			return s.failInToken("in literal " + lit + " (expecting " + quoteChar(lit[i]) + ")")
		}
	}
	return s.failInToken("in literal " + lit)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// scanNumber consumes a number; integer reports that it has neither a
// fraction nor an exponent.
func (s *jsonScanner) scanNumber() (integer bool, err error) {
	d, i := s.data, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		i = skipDigits(d, i+1)
	default:
		s.pos = i
		return false, s.failInToken("in numeric literal")
	}
	integer = true
	if i < len(d) && d[i] == '.' {
		integer = false
		if i = skipDigits(d, i+1); !isDigit(d[i-1]) {
			s.pos = i
			return false, s.failInToken("after decimal point in numeric literal")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i = skipDigits(d, i); !isDigit(d[i-1]) {
			s.pos = i
			return false, s.failInToken("in exponent of numeric literal")
		}
	}
	s.pos = i
	return integer, nil
}

// uint64Value converts the text of an integer number for a uint64 field,
// as strconv.ParseUint does: no sign, no overflow.
func uint64Value(text []byte) (uint64, bool) {
	if len(text) == 0 || text[0] == '-' {
		return 0, false
	}
	return digitsValue(text)
}

// int64Value converts the text of an integer number for an int field.
func int64Value(text []byte) (int64, bool) {
	neg := len(text) > 0 && text[0] == '-'
	if neg {
		text = text[1:]
	}
	n, ok := digitsValue(text)
	switch {
	case !ok || n > 1<<63 || (!neg && n == 1<<63):
		return 0, false
	case neg:
		return -int64(n), true
	}
	return int64(n), true
}

// digitsValue converts a run of decimal digits; ok is false on overflow.
func digitsValue(digits []byte) (n uint64, ok bool) {
	const cutoff = (1<<64-1)/10 + 1
	for _, c := range digits {
		if n >= cutoff {
			return 0, false
		}
		n1 := n*10 + uint64(c-'0')
		if n1 < n*10 {
			return 0, false
		}
		n = n1
	}
	return n, true
}

// jsonPlainByte marks the bytes a string may hold as they are: printable
// ASCII other than the quote and the backslash.
var jsonPlainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that is not
// plain. Strings are mostly plain ASCII (a payload's blob is kilobytes of
// it), so it tests 32 bytes at a time, then 8, then one.
func skipPlain(d []byte, i int) int {
	w := d[i:]
	for len(w) >= 32 && notPlain(w[:8])|notPlain(w[8:16])|notPlain(w[16:24])|notPlain(w[24:32]) == 0 {
		w = w[32:]
	}
	for len(w) >= 8 && notPlain(w[:8]) == 0 {
		w = w[8:]
	}
	i = len(d) - len(w)
	for i < len(d) && jsonPlainByte[d[i]] {
		i++
	}
	return i
}

// notPlain is not zero when one of the eight bytes in b is not plain: at or
// above 0x80 (its top bit), below 0x20, a quote or a backslash. Once no top
// bit is set, x - n*ones sets a top bit exactly when a byte is below n, as
// a borrow only ever follows such a byte; a byte equal to c is one below 1
// in x ^ c*ones.
func notPlain(b []byte) uint64 {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	x := binary.LittleEndian.Uint64(b)
	quote, backslash := x^('"'*ones), x^('\\'*ones)
	return (x | (x - 0x20*ones) | (quote - ones) | (backslash - ones)) & tops
}

// scanString consumes a string literal and returns its content without the
// quotes; plain reports that the content holds no escape and no byte
// outside ASCII, so it is its own value.
func (s *jsonScanner) scanString() (content []byte, plain bool, err error) {
	d := s.data
	start := s.pos + 1
	plain = true
	for i := start; i < len(d); {
		c := d[i]
		switch {
		case jsonPlainByte[c]:
			i = skipPlain(d, i+1)
		case c == '"':
			s.pos = i + 1
			return d[start:i], plain, nil
		case c == '\\':
			n, bad := escapeLen(d[i:])
			if n == 0 {
				s.pos = i + bad
				if bad > 1 {
					return nil, false, s.failInToken("in \\u hexadecimal character escape")
				}
				return nil, false, s.failInToken("in string escape code")
			}
			plain = false
			i += n
		case c < 0x20:
			s.pos = i
			return nil, false, s.fail("in string literal")
		default:
			plain = false
			i++
		}
	}
	s.pos = len(d)
	return nil, false, s.fail("")
}

// escapeLen returns the length of the escape sequence at the start of b,
// or 0 and the offset of the first bad byte when it is not a valid JSON
// escape.
func escapeLen(b []byte) (n, bad int) {
	if len(b) < 2 {
		return 0, 1
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, 0
	case 'u':
		for i := 2; i < 6; i++ {
			if i >= len(b) || !isHexDigit(b[i]) {
				return 0, i
			}
		}
		return 6, 0
	}
	return 0, 1
}

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// hexRune decodes four hex digits at the start of b, or returns -1.
func hexRune(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// jsonStringValue turns the content of a scanned string into its value.
func jsonStringValue(content []byte, plain bool) string {
	if plain {
		return string(content)
	}
	return string(appendUnquoted(make([]byte, 0, len(content)), content))
}

// appendUnquoted decodes validated string content the way encoding/json
// does: escapes resolved, a \u surrogate pair combined, and a lone
// surrogate or an invalid UTF-8 byte replaced by U+FFFD. Runs that need no
// change are copied whole.
func appendUnquoted(dst, content []byte) []byte {
	start := 0 // content[start:i] is its own value
	for i := 0; i < len(content); {
		c := content[i]
		if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRune(content[i:]); r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		} else if c != '\\' {
			i++
			continue
		}
		dst = append(dst, content[start:i]...)
		if c == '\\' {
			var r rune
			r, i = unescape(content, i)
			dst = utf8.AppendRune(dst, r)
		} else {
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
		}
		start = i
	}
	return append(dst, content[start:]...)
}

// unescape decodes the (valid) escape at content[i] and returns the rune
// and the index after it.
func unescape(content []byte, i int) (rune, int) {
	switch c := content[i+1]; c {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
	default:
		return rune(c), i + 2
	}
	r := hexRune(content[i+2:])
	i += 6
	if !utf16.IsSurrogate(r) {
		return r, i
	}
	if i+1 < len(content) && content[i] == '\\' && content[i+1] == 'u' {
		if pair := utf16.DecodeRune(r, hexRune(content[i+2:])); pair != unicode.ReplacementChar {
			return pair, i + 6
		}
	}
	return unicode.ReplacementChar, i
}

// foldEqualASCII reports whether key matches the ASCII name under the
// case folding encoding/json applies to member names: ASCII letters of
// either case, and any rune whose simple fold class holds the letter
// (such as U+017F for 's' or U+212A for 'k').
func foldEqualASCII(key []byte, name string) bool {
	i := 0
	for j := 0; j < len(name); j++ {
		if i >= len(key) {
			return false
		}
		want := upperASCII(name[j])
		if c := key[i]; c < utf8.RuneSelf {
			if upperASCII(c) != want {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(key[i:])
		if smallestFold(r) != rune(want) {
			return false
		}
		i += size
	}
	return i == len(key)
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// smallestFold returns the smallest rune of r's simple fold class.
func smallestFold(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
