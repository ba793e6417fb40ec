package jsonscan

import (
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// AppendQuoted appends s as a JSON string: hubprobe's one JSON string
// writer. It escapes what encoding/json escapes except '<', '>' and '&'
// (nothing here is embedded in HTML): the quote, the backslash and control
// bytes, U+2028 and U+2029 (so the text is also safe JavaScript). A byte
// that is not UTF-8 becomes U+FFFD, written as the character itself rather
// than encoding/json's \ufffd, so that text once written comes back byte for
// byte through a transcoding round trip. encoding/json reads the result back
// as s, with invalid bytes replaced as it would replace them.
func AppendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte[c] {
			i = SkipPlain(s, i+1)
			continue
		}
		dst = append(dst, s[start:i]...)
		if c < utf8.RuneSelf {
			dst = appendEscapedASCII(dst, c)
			i++
		} else {
			var n int
			dst, n = appendNonASCII(dst, s[i:])
			i += n
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendQuotedString is AppendQuoted for a string: an id, a name, a
// target. It reads the string's bytes in place, which AppendQuoted only
// reads: a copy would cost an allocation per message for any name longer
// than 32 bytes.
func AppendQuotedString(dst []byte, s string) []byte {
	return AppendQuoted(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
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

// appendNonASCII appends the rune s starts with and returns how many
// bytes of s it took.
func appendNonASCII(dst, s []byte) ([]byte, int) {
	r, n := utf8.DecodeRune(s)
	switch {
	case r == utf8.RuneError && n == 1:
		return utf8.AppendRune(dst, utf8.RuneError), 1
	case r == '\u2028':
		return append(dst, `\u2028`...), n
	case r == '\u2029':
		return append(dst, `\u2029`...), n
	}
	return append(dst, s[:n]...), n
}
