package signalr

import (
	"errors"
	"testing"
)

func TestHandshakeRequestRoundTrip(t *testing.T) {
	b := AppendHandshakeRequest(nil, JSONProtocol{})
	if string(b) != "{\"protocol\":\"json\",\"version\":1}\x1e" {
		t.Fatalf("request = %q", b)
	}
	record, rest, ok := SplitHandshake(append(b, "{\"type\":6}\x1e"...))
	if !ok || string(rest) != "{\"type\":6}\x1e" {
		t.Fatalf("split: ok=%v rest=%q", ok, rest)
	}
	req, err := ParseHandshakeRequest(record)
	if err != nil || req.Protocol != "json" || req.Version == nil || *req.Version != 1 {
		t.Errorf("parsed %+v, %v", req, err)
	}
}

func TestSplitHandshakeWaitsForSeparator(t *testing.T) {
	if _, rest, ok := SplitHandshake([]byte(`{"protocol":"js`)); ok || string(rest) != `{"protocol":"js` {
		t.Errorf("ok=%v rest=%q", ok, rest)
	}
}

func TestParseHandshakeRequestRejects(t *testing.T) {
	for name, record := range map[string]string{
		"not JSON":         `{"protocol":`,
		"no version":       `{"protocol":"json"}`,
		"no protocol":      `{"version":1}`,
		"version a string": `{"protocol":"json","version":"1"}`,
	} {
		if _, err := ParseHandshakeRequest([]byte(record)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: err = %v, want ErrProtocol", name, err)
		}
	}
}

func TestHandshakeResponses(t *testing.T) {
	ok := AppendHandshakeResponse(nil, "")
	if string(ok) != "{}\x1e" {
		t.Errorf("success response = %q", ok)
	}
	if err := ParseHandshakeResponse(ok[:len(ok)-1]); err != nil {
		t.Errorf("success parsed as %v", err)
	}
	refused := AppendHandshakeResponse(nil, "Requested protocol 'x' is not available.")
	err := ParseHandshakeResponse(refused[:len(refused)-1])
	var he *HandshakeError
	if !errors.As(err, &he) || he.Message != "Requested protocol 'x' is not available." {
		t.Errorf("refusal parsed as %v", err)
	}
	if err := ParseHandshakeResponse([]byte("nope")); !errors.Is(err, ErrProtocol) {
		t.Errorf("garbage parsed as %v", err)
	}
	// A hub message where the answer belongs is a server writing out of
	// order, not a handshake that succeeded.
	early := `{"type":1,"target":"RecordLatency","arguments":[{}]}`
	if err := ParseHandshakeResponse([]byte(early)); !errors.Is(err, ErrProtocol) ||
		err.Error() != "protocol error: expected a handshake response, got a hub message" {
		t.Errorf("a hub message before the handshake answer parsed as %v", err)
	}
}
