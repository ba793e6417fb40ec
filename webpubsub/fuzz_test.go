package webpubsub

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxErrorLen bounds an error's text: errors quote at most a short prefix
// of what the peer sent.
const maxErrorLen = 200

// FuzzDecode checks, for any bytes, that Decode does not panic; that an
// error wraps ErrInvalidFrame, stays short, and is a SyntaxError whenever
// encoding/json rejects the bytes too; that an accepted frame is valid JSON
// and survives AppendFrame and a second Decode; and that a Decoder carries
// nothing over from the frame before.
func FuzzDecode(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Decode(in)
		if err != nil {
			checkDecodeError(t, in, err)
		} else {
			checkAccepted(t, in, &got)
		}
		var d Decoder
		var warm, again Frame
		_ = d.Decode([]byte(`{"type":"message","from":"group","group":"g","dataType":"binary","data":"AAAA","sequenceId":3}`), &warm)
		errAgain := d.Decode(in, &again)
		if (err == nil) != (errAgain == nil) || (err == nil && !equalFrames(&got, &again)) {
			t.Fatalf("a reused Decoder disagrees: %+v, %v; fresh: %+v, %v", again, errAgain, got, err)
		}
	})
}

func checkDecodeError(t *testing.T, in []byte, err error) {
	if !errors.Is(err, ErrInvalidFrame) {
		t.Fatalf("error %v does not wrap ErrInvalidFrame", err)
	}
	if len(err.Error()) > maxErrorLen {
		t.Fatalf("error is %d bytes long: %v", len(err.Error()), err)
	}
	var syntax *SyntaxError
	if !json.Valid(in) && !errors.As(err, &syntax) {
		t.Fatalf("encoding/json rejects %q but the error is not a SyntaxError: %v", in, err)
	}
}

func checkAccepted(t *testing.T, in []byte, f *Frame) {
	if !json.Valid(in) {
		t.Fatalf("Decode accepted %q, which encoding/json rejects", in)
	}
	out, err := AppendFrame(nil, f)
	if err != nil {
		t.Fatalf("AppendFrame(%+v): %v", f, err)
	}
	back, err := Decode(out)
	if err != nil {
		t.Fatalf("Decode(%s) of AppendFrame output: %v", out, err)
	}
	if validText(f) && !equalFrames(f, &back) {
		t.Fatalf("round trip through %s\n got %+v\nwant %+v", out, back, *f)
	}
}

// validText reports whether every string of f is valid UTF-8, which
// AppendFrame then writes unchanged.
func validText(f *Frame) bool {
	for _, s := range []string{f.Group, f.Event, f.FromUserID, f.Error.Name, f.Error.Message,
		f.UserID, f.ConnectionID, f.ReconnectionToken, f.Message} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return f.DataType != DataTypeText || utf8.Valid(f.Data)
}

// FuzzParseCloudEvent checks that ParseCloudEvent does not panic, that its
// errors are the documented ones and short, and that an accepted event
// written back with WriteHeader parses to the same event.
func FuzzParseCloudEvent(f *testing.F) {
	f.Add(sampleEventLines)
	f.Fuzz(func(t *testing.T, in string) {
		e, err := ParseCloudEvent(headerFromLines(in))
		if err != nil {
			if !errors.Is(err, ErrNotWebPubSub) && !errors.Is(err, ErrInvalidEvent) {
				t.Fatalf("undocumented error %v", err)
			}
			if len(err.Error()) > maxErrorLen {
				t.Fatalf("error is %d bytes long: %v", len(err.Error()), err)
			}
			return
		}
		h := http.Header{}
		e.WriteHeader(h)
		back, err := ParseCloudEvent(h)
		if err != nil {
			t.Fatalf("ParseCloudEvent of WriteHeader output %v: %v", h, err)
		}
		if !reflect.DeepEqual(e, back) {
			t.Fatalf("round trip\n got %+v\nwant %+v", back, e)
		}
	})
}

// FuzzVerifySignature compares VerifySignature with a plain reading of the
// rule (any comma-separated entry equal to sha256=<hex HMAC>, ASCII case aside),
// and checks that what Sign writes always verifies.
func FuzzVerifySignature(f *testing.F) {
	f.Add("sha256=7767effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561", "0f9c97a2f0bf4706afe87a14e0797b11", "7aab239577fd4f24bc919802fb629f5f")
	f.Add("sha256=x, SHA256=AB", "c", "k")
	f.Fuzz(func(t *testing.T, signature, connectionID, key string) {
		want := false
		expected := Sign(connectionID, key)
		for entry := range strings.SplitSeq(signature, ",") {
			lower := strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, strings.TrimSpace(entry))
			want = want || lower == expected
		}
		if got := VerifySignature(signature, connectionID, []string{key}); got != want {
			t.Fatalf("VerifySignature(%q, %q, %q) = %v, want %v", signature, connectionID, key, got, want)
		}
		if !VerifySignature(signature+","+Sign(connectionID, "other", key), connectionID, []string{key}) {
			t.Fatal("a signature Sign wrote does not verify")
		}
	})
}
