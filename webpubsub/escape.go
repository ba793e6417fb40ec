package webpubsub

import (
	"unicode/utf8"
)

// plainJSONByte marks the bytes a JSON string carries as they are when
// encoding: printable ASCII but the quote and the backslash. Everything
// else takes the slow path in appendQuoted.
var plainJSONByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string. Invalid UTF-8 becomes U+FFFD and
// U+2028/U+2029 are escaped, as encoding/json does, so the text is valid
// JSON and safe to evaluate as JavaScript.
func appendQuoted[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainJSONByte[c] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		if c < utf8.RuneSelf {
			dst = appendEscapedASCII(dst, c)
			i++
		} else {
			var n int
			dst, n = appendNonASCII(dst, s, i)
			i += n
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendEscapedASCII(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendNonASCII appends the rune starting at s[i] and returns how many
// bytes of s it took.
func appendNonASCII[T string | []byte](dst []byte, s T, i int) ([]byte, int) {
	var r rune
	var n int
	switch v := any(s).(type) {
	case string:
		r, n = utf8.DecodeRuneInString(v[i:])
	case []byte:
		r, n = utf8.DecodeRune(v[i:])
	}
	switch {
	case r == utf8.RuneError && n == 1:
		return append(dst, `\ufffd`...), 1
	case r == '\u2028':
		return append(dst, `\u2028`...), n
	case r == '\u2029':
		return append(dst, `\u2029`...), n
	}
	return append(dst, s[i:i+n]...), n
}
