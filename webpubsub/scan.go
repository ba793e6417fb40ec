package webpubsub

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxNesting bounds how deep the data of a frame may nest. Recursion depth,
// and with it stack use, stays bounded for hostile input; real payloads
// nest a handful of levels.
const maxNesting = 1000

// scanner validates JSON with the RFC 8259 grammar in one pass over data.
// It never allocates: values are reported as offsets into data.
type scanner struct {
	data  []byte
	pos   int
	depth int
}

func (s *scanner) syntaxError(what string) error {
	if s.pos >= len(s.data) {
		return &SyntaxError{Offset: len(s.data), msg: "unexpected end of frame"}
	}
	return &SyntaxError{Offset: s.pos, msg: "invalid character " + quoteByte(s.data[s.pos]) + " " + what}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f && c != '\'' {
		return "'" + string(rune(c)) + "'"
	}
	return strconv.QuoteRune(rune(c))
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// end checks that only white space follows the top-level value.
func (s *scanner) end() error {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.syntaxError("after top-level value")
	}
	return nil
}

// next skips white space and returns the next byte, or 0 at the end.
func (s *scanner) next() byte {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// consume skips white space and the byte c, or fails saying what was
// expected instead.
func (s *scanner) consume(c byte, what string) error {
	if s.next() != c {
		return s.syntaxError(what)
	}
	s.pos++
	return nil
}

// value skips one JSON value and returns its first byte, which tells its
// kind: '{', '[', '"', 't', 'f', 'n', or '-' / a digit for a number.
func (s *scanner) value() (byte, error) {
	c := s.next()
	var err error
	switch {
	case c == '{':
		err = s.object()
	case c == '[':
		err = s.array()
	case c == '"':
		_, _, err = s.str()
	case c == 't':
		err = s.literal("true")
	case c == 'f':
		err = s.literal("false")
	case c == 'n':
		err = s.literal("null")
	case c == '-' || isDigit(c):
		_, err = s.number()
	default:
		err = s.syntaxError("looking for beginning of value")
	}
	return c, err
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxNesting {
		return &SyntaxError{Offset: s.pos, msg: "nesting deeper than " + strconv.Itoa(maxNesting)}
	}
	s.pos++
	return nil
}

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	if s.next() == '}' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		if s.next() != '"' {
			return s.syntaxError("looking for beginning of object key string")
		}
		if _, _, err := s.str(); err != nil {
			return err
		}
		if err := s.consume(':', "after object key"); err != nil {
			return err
		}
		if _, err := s.value(); err != nil {
			return err
		}
		done, err := s.after('}', "after object key:value pair")
		if done || err != nil {
			return err
		}
	}
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	if s.next() == ']' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		if _, err := s.value(); err != nil {
			return err
		}
		done, err := s.after(']', "after array element")
		if done || err != nil {
			return err
		}
	}
}

// after consumes the ',' between members or the closer that ends them.
func (s *scanner) after(closer byte, what string) (done bool, err error) {
	switch s.next() {
	case ',':
		s.pos++
		return false, nil
	case closer:
		s.pos++
		s.depth--
		return true, nil
	}
	return false, s.syntaxError(what)
}

func (s *scanner) literal(lit string) error {
	for i := 0; i < len(lit); i++ {
		if s.pos >= len(s.data) || s.data[s.pos] != lit[i] {
			return s.syntaxError("in literal " + lit)
		}
		s.pos++
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && isDigit(s.data[s.pos]) {
		s.pos++
		n++
	}
	return n
}

// number skips a number and reports whether it is a plain non-negative
// integer (no sign, fraction or exponent).
func (s *scanner) number() (plainInteger bool, err error) {
	plainInteger = true
	if s.data[s.pos] == '-' {
		plainInteger = false
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.digits() == 0:
		return false, s.syntaxError("in numeric literal")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		plainInteger = false
		s.pos++
		if s.digits() == 0 {
			return false, s.syntaxError("after decimal point in numeric literal")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		plainInteger = false
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return false, s.syntaxError("in exponent of numeric literal")
		}
	}
	return plainInteger, nil
}

// plainStringByte marks the bytes that stand for themselves inside a
// string: everything but control bytes, the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str skips a string literal at pos and returns the offsets of its content
// (without the quotes) and whether the content holds escapes.
func (s *scanner) str() (start int, escaped bool, err error) {
	start = s.pos + 1
	d := s.data
	i := start
	for i < len(d) {
		c := d[i]
		if plainStringByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			s.pos = i + 1
			return start, escaped, nil
		case c == '\\':
			n := escapeLength(d[i:])
			if n == 0 {
				s.pos = i + 1
				return 0, false, s.syntaxError("in string escape code")
			}
			escaped = true
			i += n
		default:
			s.pos = i
			return 0, false, s.syntaxError("in string literal")
		}
	}
	s.pos = len(d)
	return 0, false, s.syntaxError("")
}

// escapeLength is the length of the valid escape at the start of b, or 0.
func escapeLength(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) >= 6 && hex4(b[2:6]) >= 0 {
			return 6
		}
	}
	return 0
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case isDigit(c):
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

// unquote appends the value of validated string content to dst: escapes
// resolved and surrogate pairs joined; a lone surrogate becomes U+FFFD.
// Bytes outside escapes are copied as they are.
func unquote(dst, content []byte) []byte {
	for i := 0; i < len(content); {
		c := content[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		var r rune
		r, i = unescapeAt(content, i)
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

func unescapeAt(content []byte, i int) (rune, int) {
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
		r := hex4(content[i+2 : i+6])
		i += 6
		if !utf16.IsSurrogate(r) {
			return r, i
		}
		if i+6 <= len(content) && content[i] == '\\' && content[i+1] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(content[i+2:i+6])); pair != utf8.RuneError {
				return pair, i + 6
			}
		}
		return utf8.RuneError, i
	default:
		return rune(c), i + 2
	}
}

// parseUint parses the digits of a plain integer; false when it does not
// fit in a uint64.
func parseUint(digits []byte) (uint64, bool) {
	if len(digits) == 0 || len(digits) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
