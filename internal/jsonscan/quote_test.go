package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestAppendQuoted(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"plain ASCII, 40 bytes long to pass 32 at a time", `"plain ASCII, 40 bytes long to pass 32 at a time"`},
		{"a\"b\\c/d", `"a\"b\\c/d"`},
		{"\b\f\n\r\t\x01\x1f", `"\b\f\n\r\t\u0001\u001f"`},
		{"<&>", `"<&>"`},
		{"é\u2028\u2029€", `"é\u2028\u2029€"`},
		{"a\xffb\xe2\x82", "\"a\ufffdb\ufffd\ufffd\""},
	} {
		if got := string(AppendQuoted([]byte("x"), []byte(c.in))); got != "x"+c.want {
			t.Errorf("AppendQuoted(%q) = %s, want %s", c.in, got[1:], c.want)
		}
		if got := string(AppendQuotedString(nil, c.in)); got != c.want {
			t.Errorf("AppendQuoted(string %q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Whatever the bytes, the writer's text is valid JSON that encoding/json
// reads as the value it reads from its own encoding of them, the string
// and byte forms agree, and writing the value read back gives the same
// text again (so a transcoding round trip is stable).
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"\\\x00\x7f", "\xff\xfe", "\u2028é€😀", "\xe2\x82"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got := AppendQuoted(nil, s)
		if !bytes.Equal(got, AppendQuotedString(nil, string(s))) {
			t.Fatalf("byte and string forms differ for %q", s)
		}
		var ours, theirs string
		if err := json.Unmarshal(got, &ours); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s is not JSON: %v", s, got, err)
		}
		want, _ := json.Marshal(string(s))
		if err := json.Unmarshal(want, &theirs); err != nil || ours != theirs {
			t.Fatalf("AppendQuoted(%q) reads as %q, encoding/json's text as %q", s, ours, theirs)
		}
		if again := AppendQuotedString(nil, ours); !bytes.Equal(again, got) {
			t.Fatalf("rewriting %q gives %s, first %s", ours, again, got)
		}
	})
}
