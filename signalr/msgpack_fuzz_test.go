package signalr

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzMessagePackProtocol feeds arbitrary bytes to the parser: it must
// never panic, and every message it accepts must survive an encode/parse
// round trip unchanged, since values are read into canonical JSON.
// testdata/fuzz/FuzzMessagePackProtocol holds the spec's examples and the
// MessagePack formats JSON never produces.
func FuzzMessagePackProtocol(f *testing.F) {
	for _, m := range mpSampleMessages() {
		f.Add(mpEncode(f, m))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rest, err := MessagePackProtocol{}.ParseMessages(data, func(m *Message) error {
			once, err := MessagePackProtocol{}.AppendMessage(nil, m)
			if err != nil {
				t.Fatalf("cannot encode accepted message %+v: %v", m, err)
			}
			var again []Message
			rest, err := MessagePackProtocol{}.ParseMessages(once, func(m *Message) error { again = append(again, *m); return nil })
			if err != nil || len(rest) != 0 || len(again) != 1 {
				t.Fatalf("encoder output % x: %d messages, rest % x, err %v", once, len(again), rest, err)
			}
			if !reflect.DeepEqual(again[0], *m) {
				t.Fatalf("round trip changed %+v into %+v", *m, again[0])
			}
			return nil
		})
		if err == nil && !bytes.HasSuffix(data, rest) {
			t.Fatalf("rest % x is not the tail of the input", rest)
		}
		if err == nil && len(rest) > 0 {
			size, n, perr := readMessagePackLength(rest)
			if perr != nil || n > 0 && len(rest) >= n+size {
				t.Fatalf("rest % x is not a partial message (%v)", rest, perr)
			}
		}
	})
}

// FuzzTranscodeJSON checks the JSON reader against encoding/json: it must
// accept exactly the valid documents (bar numbers beyond float64 and
// nesting beyond maxValueDepth) and keep their values.
func FuzzTranscodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-2,3.5e-3,"x\u00e9\ud83d\ude00",true,false,null],"":{}}`,
		`[18446744073709551615,-9223372036854775808,18446744073709551616,-0,0.1]`,
		`"\ud800\udc00\ud800 \\ \/ \b\f\n\r\t"`, " [ 1 , { \"k\" : [ ] } ] ", `1e400`, `[1,]`, `{"a" 1}`, "\"\xff\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		mp, err := appendMsgpackFromJSON(nil, src)
		valid := json.Valid(src)
		switch {
		case err != nil && valid:
			if msg := err.Error(); !strings.Contains(msg, "out of range") && !strings.Contains(msg, "nested deeper") {
				t.Fatalf("valid JSON %q refused: %v", src, err)
			}
			return
		case err != nil:
			return
		case !valid:
			t.Fatalf("invalid JSON %q accepted as % x", src, mp)
		}
		back, err := mpToJSON(mp)
		if err != nil {
			t.Fatalf("%q: own output % x does not read back: %v", src, mp, err)
		}
		var want, got any
		if err := json.Unmarshal(src, &want); err != nil {
			t.Fatalf("encoding/json refuses %q, which json.Valid accepted: %v", src, err)
		}
		if err := json.Unmarshal([]byte(back), &got); err != nil {
			t.Fatalf("%q became invalid JSON %q: %v", src, back, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q became %q", src, back)
		}
	})
}
