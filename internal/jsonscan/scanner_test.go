package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSkipPlainMatchesTable puts every byte value at every offset of a
// plain run, behind other plain or non-plain fillers, and checks that the
// word-at-a-time skip stops exactly where the byte table says.
func TestSkipPlainMatchesTable(t *testing.T) {
	for _, fill := range []byte{'A', 0x00, 0x1f, 0x20, 0x21, '"', '[', '\\', 0x7f, 0x80, 0xff} {
		for c := 0; c < 256; c++ {
			for at := 0; at < 80; at++ {
				d := []byte(strings.Repeat("a", 80) + string([]byte{fill, fill}))
				d[at] = byte(c)
				want := 0
				for want < len(d) && plainByte[d[want]] {
					want++
				}
				if got := SkipPlain(d, 0); got != want {
					t.Fatalf("byte %#x at %d before %#x: SkipPlain = %d, want %d", c, at, fill, got, want)
				}
			}
		}
	}
}

// TestScanStringFindsEveryByte puts every byte value at every offset of a
// string's content, in the words ScanString tests itself, in SkipPlain's
// and in the last bytes of the input, and checks where the string ends.
func TestScanStringFindsEveryByte(t *testing.T) {
	for n := 1; n <= 48; n++ {
		for c := 0; c < 256; c++ {
			for at := 0; at < n; at++ {
				d := []byte(`"` + strings.Repeat("a", n) + `"`)
				d[1+at] = byte(c)
				checkStringEnd(t, d, at, byte(c))
			}
		}
	}
}

func checkStringEnd(t *testing.T, d []byte, at int, c byte) {
	t.Helper()
	s := New(d, MaxDepth)
	content, plain, err := s.ScanString()
	var wantErr string
	wantLen, wantPlain := len(d)-2, c < utf8.RuneSelf
	switch {
	case c == '"':
		wantLen, wantPlain = at, true
	case c == '\\' && at == wantLen-1: // it escapes the closing quote
		wantErr = "unexpected end of JSON input"
	case c == '\\': // \a is no escape
		wantErr = "in string escape code"
	case c < 0x20:
		wantErr = "in string literal"
	}
	if wantErr != "" {
		if err == nil || !strings.HasSuffix(err.Error(), wantErr) {
			t.Fatalf("%q: error %v, want one %s", d, err, wantErr)
		}
		return
	}
	if err != nil || len(content) != wantLen || plain != wantPlain || s.Offset() != wantLen+2 {
		t.Fatalf("%q: content %q, plain %v, offset %d, %v; want %d bytes, plain %v", d, content, plain, s.Offset(), err, wantLen, wantPlain)
	}
}

// skipOne validates data as one JSON value with white space around it.
func skipOne(data string, maxDepth int) error {
	s := New([]byte(data), maxDepth)
	if _, err := s.SkipValue(); err != nil {
		return err
	}
	return s.End()
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		in, msg      string
		offset       int
		end, tooDeep bool
	}{
		{``, "unexpected end of JSON input", 0, true, false},
		{`[1,]`, "invalid character ']' looking for beginning of value", 3, false, false},
		{`{"a" 1}`, "invalid character '1' after object key", 5, false, false},
		{`{"a":1 "b"}`, "invalid character '\"' after object key:value pair", 7, false, false},
		{`[1 2]`, "invalid character '2' after array element", 3, false, false},
		{`{1:2}`, "invalid character '1' looking for beginning of object key string", 1, false, false},
		{`1 2`, "invalid character '2' after top-level value", 2, false, false},
		{`tru`, "invalid character ' ' in literal true (expecting 'e')", 3, true, false},
		{`nulx`, "invalid character 'x' in literal null (expecting 'l')", 3, false, false},
		{`-`, "invalid character ' ' in numeric literal", 1, true, false},
		{`1.x`, "invalid character 'x' after decimal point in numeric literal", 2, false, false},
		{`1e+`, "invalid character ' ' in exponent of numeric literal", 3, true, false},
		{`"a`, "unexpected end of JSON input", 2, true, false},
		{`"\x"`, "invalid character 'x' in string escape code", 2, false, false},
		{`"\u12G4"`, "invalid character 'G' in \\u hexadecimal character escape", 5, false, false},
		{"\"a\x01\"", "invalid character '\\x01' in string literal", 2, false, false},
		{`[\]`, "invalid character '\\\\' looking for beginning of value", 1, false, false},
		{`[[[]]]`, "invalid character '[' exceeded max depth", 2, false, true},
	} {
		err := skipOne(tc.in, 2)
		se, ok := err.(*SyntaxError)
		if !ok {
			t.Errorf("%q: error %v is not a *SyntaxError", tc.in, err)
			continue
		}
		if se.Error() != tc.msg || se.Offset != tc.offset || se.End != tc.end || se.TooDeep != tc.tooDeep {
			t.Errorf("%q: got %q at %d, end %v, too deep %v; want %q at %d, end %v, too deep %v",
				tc.in, se, se.Offset, se.End, se.TooDeep, tc.msg, tc.offset, tc.end, tc.tooDeep)
		}
	}
	if err := skipOne(`[[]]`, 2); err != nil {
		t.Errorf("two levels with a limit of two: %v", err)
	}
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		in      string
		integer bool
		u       uint64
		uOK     bool
		i       int64
		iOK     bool
	}{
		{"0", true, 0, true, 0, true},
		{"-0", true, 0, false, 0, true},
		{"18446744073709551615", true, 1<<64 - 1, true, 0, false},
		{"18446744073709551616", true, 0, false, 0, false},
		{"99999999999999999999", true, 0, false, 0, false},
		{"9223372036854775807", true, 1<<63 - 1, true, 1<<63 - 1, true},
		{"-9223372036854775808", true, 0, false, -1 << 63, true},
		{"-9223372036854775809", true, 0, false, 0, false},
		{"1.5", false, 0, false, 0, false},
		{"1e3", false, 0, false, 0, false},
	} {
		s := New([]byte(tc.in), MaxDepth)
		text, integer, err := s.ScanNumber()
		if err != nil || string(text) != tc.in || integer != tc.integer {
			t.Errorf("ScanNumber(%s) = %q, %v, %v", tc.in, text, integer, err)
		}
		if u, ok := ParseUint(text); u != tc.u || ok != tc.uOK {
			t.Errorf("ParseUint(%s) = %d, %v; want %d, %v", tc.in, u, ok, tc.u, tc.uOK)
		}
		if i, ok := ParseInt(text); i != tc.i || ok != tc.iOK {
			t.Errorf("ParseInt(%s) = %d, %v; want %d, %v", tc.in, i, ok, tc.i, tc.iOK)
		}
	}
	for _, bad := range []string{"", "+1", "1a", " 1", "-"} {
		if n, ok := ParseUint([]byte(bad)); ok {
			t.Errorf("ParseUint(%q) = %d, accepted", bad, n)
		}
	}
}

func TestStringValues(t *testing.T) {
	for _, tc := range []struct {
		in, unquoted, unescaped string
		plain                   bool
	}{
		{`"abc"`, "abc", "abc", true},
		{`""`, "", "", true},
		{`"caf\u00e9 \ud83d\ude00"`, "café 😀", "café 😀", false},
		{`"\ud800x\udc00\ud83d\u0041"`, "\ufffdx\ufffd\ufffdA", "\ufffdx\ufffd\ufffdA", false},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", "\"\\/\b\f\n\r\t", false},
		{"\"\xff\\n\xc3\"", "\ufffd\n\ufffd", "\xff\n\xc3", false},
		{"\"é\"", "é", "é", false},
	} {
		s := New([]byte(tc.in), MaxDepth)
		content, plain, err := s.ScanString()
		if err != nil || plain != tc.plain {
			t.Fatalf("ScanString(%s): plain %v, %v", tc.in, plain, err)
		}
		if got := string(AppendUnquoted([]byte("x"), content)); got != "x"+tc.unquoted {
			t.Errorf("AppendUnquoted(%s) = %q, want %q", tc.in, got[1:], tc.unquoted)
		}
		if got := StringValue(content, plain); got != tc.unquoted {
			t.Errorf("StringValue(%s) = %q, want %q", tc.in, got, tc.unquoted)
		}
		if got := string(AppendUnescaped([]byte("x"), content)); got != "x"+tc.unescaped {
			t.Errorf("AppendUnescaped(%s) = %q, want %q", tc.in, got[1:], tc.unescaped)
		}
	}
}

// FuzzScanMatchesEncodingJSON checks the grammar against encoding/json on
// arbitrary bytes: the same verdict, and for a string the same value.
func FuzzScanMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,-2.5e-3,true,false,null,{}],"":"x"}`, ` [ 1 , { "k" : [ ] } ] `, `"\ud83d\ude00\ud800\u0041"`,
		"\"\xff\\n\"", `{"a":1,}`, `01`, `1e`, `tru`, `"\u12"`, "\"\x01\"", `[[[[[[[[[[1]]]]]]]]]]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := skipOne(string(data), MaxDepth)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("%q: scanner says %v, encoding/json valid = %v", data, err, valid)
		}
		s := New(data, MaxDepth)
		if s.Peek() != '"' {
			return
		}
		content, plain, err := s.ScanString()
		if err != nil || s.End() != nil {
			return
		}
		var want string
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("%q: encoding/json refuses a string the scanner accepts: %v", data, err)
		}
		if got := StringValue(content, plain); got != want {
			t.Fatalf("%q: value %q, encoding/json says %q", data, got, want)
		}
		if unescaped := AppendUnescaped(nil, content); utf8.Valid(unescaped) && string(unescaped) != want {
			t.Fatalf("%q: unescaped %q, encoding/json says %q", data, unescaped, want)
		}
	})
}
