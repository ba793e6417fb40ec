package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// plainByte marks the bytes a string may hold as they are: printable ASCII
// other than the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// IsPlain reports whether a string may hold c as it is: c is printable
// ASCII other than the quote and the backslash.
func IsPlain(c byte) bool { return plainByte[c] }

// SkipPlain returns the index of the first byte at or after i that is not
// plain (see IsPlain). It tests 8 bytes at a time, and where those are all
// plain (a payload's blob is kilobytes of plain ASCII) 32 at a time.
func SkipPlain(d []byte, i int) int {
	w := d[i:]
	for len(w) >= 8 {
		if m := notPlain(w[:8]); m != 0 {
			return len(d) - len(w) + firstNotPlain(m)
		}
		w = w[8:]
		for len(w) >= 32 && notPlain(w[:8])|notPlain(w[8:16])|notPlain(w[16:24])|notPlain(w[24:32]) == 0 {
			w = w[32:]
		}
	}
	i = len(d) - len(w)
	for i < len(d) && plainByte[d[i]] {
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

// firstNotPlain is the index, within its eight bytes, of the first byte
// that a non-zero notPlain result flags. Only that lowest flag is exact
// (a borrow may flag bytes after it), and it is the one needed.
func firstNotPlain(m uint64) int { return bits.TrailingZeros64(m) / 8 }

// ScanString consumes a string and returns its content without the
// quotes; plain reports that the content holds no escape and no byte
// outside ASCII, so it is its own value.
//
// It tests eight bytes at a time itself: names and most values end within
// a word or two, too soon for a call to SkipPlain to pay. A string with
// two plain words is likely a blob, which SkipPlain skips faster.
func (s *Scanner) ScanString() (content []byte, plain bool, err error) {
	d := s.data
	start := s.pos + 1
	plain = true
	for i, words := start, 0; i < len(d); {
		if len(d)-i >= 8 {
			m := notPlain(d[i : i+8])
			if m == 0 {
				if i += 8; words == 1 {
					i = SkipPlain(d, i)
				}
				words++
				continue
			}
			i += firstNotPlain(m)
		}
		switch c := d[i]; {
		case plainByte[c]: // within the last eight bytes of the input
			i++
		case c == '"':
			s.pos = i + 1
			return d[start:i:i], plain, nil
		case c == '\\':
			n, bad := escapeLen(d[i:])
			if n == 0 {
				return nil, false, s.badEscape(i, bad)
			}
			plain = false
			i += n
		case c < 0x20:
			s.pos = i
			return nil, false, s.Fail("in string literal")
		default:
			plain = false
			i++
		}
	}
	s.pos = len(d)
	return nil, false, s.Fail("")
}

// badEscape reports the escape at offset i, whose byte i+bad is wrong or
// missing.
func (s *Scanner) badEscape(i, bad int) error {
	s.pos = i + bad
	if bad > 1 {
		return s.failInToken("in \\u hexadecimal character escape")
	}
	return s.failInToken("in string escape code")
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
			if i >= len(b) || hexValue(b[i]) < 0 {
				return 0, i
			}
		}
		return 6, 0
	}
	return 0, 1
}

// hexValue is the value of the hex digit c, or -1.
func hexValue(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hexRune decodes the four hex digits of a scanned \u escape.
func hexRune(b []byte) rune {
	return hexValue(b[0])<<12 | hexValue(b[1])<<8 | hexValue(b[2])<<4 | hexValue(b[3])
}

// StringValue turns the content of a scanned string into its value, as
// AppendUnquoted decodes it.
func StringValue(content []byte, plain bool) string {
	if plain {
		return string(content)
	}
	return string(AppendUnquoted(make([]byte, 0, len(content)), content))
}

// AppendUnquoted appends the value of scanned string content to dst, as
// encoding/json decodes it: escapes resolved, a \u surrogate pair combined,
// and a lone surrogate or a byte that is not UTF-8 replaced by U+FFFD. Runs
// that need no change are copied whole.
func AppendUnquoted(dst, content []byte) []byte {
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

// AppendUnescaped appends scanned string content to dst with its escapes
// resolved as AppendUnquoted resolves them, but every other byte, even one
// that is not UTF-8, copied as it is.
func AppendUnescaped(dst, content []byte) []byte {
	for i := 0; i < len(content); {
		if content[i] != '\\' {
			i++
			continue
		}
		dst = append(dst, content[:i]...)
		var r rune
		r, i = unescape(content, i)
		dst = utf8.AppendRune(dst, r)
		content, i = content[i:], 0
	}
	return append(dst, content...)
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
