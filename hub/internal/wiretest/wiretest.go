// Package wiretest speaks the reference hub's wire protocols by hand, for
// the tests of the hub's packages: a bare SignalR JSON client over
// WebSockets, a driver of the Server-Sent Events and Long Polling
// transports, a bare Web PubSub client, signed REST calls, and the tokens
// the Azure SDKs would mint. Tests see exactly the bytes and status codes
// the hub writes. It knows the hub only by its wire: hub/hubtest serves
// the hub, and each package of the hub serves its own part.
package wiretest

import (
	"encoding/json"
	"testing"
	"time"
)

// Timeout bounds every wait of a test on the hub.
const Timeout = 5 * time.Second

// AccessKey looks like a real key: base64, used as its UTF-8 bytes.
const AccessKey = "aHVicHJvYmUtdGVzdC1rZXktMDEyMzQ1Njc4OWFiY2RlZg=="

// Server is a hub on loopback: a hub.Server, or the test server of one of
// the hub's packages.
type Server interface {
	// URL is the app path's base URL, e.g. "http://127.0.0.1:PORT/signalrbench".
	URL() string
	// Origin is the scheme and address, e.g. "http://127.0.0.1:PORT".
	Origin() string
}

// WaitFor polls cond until it holds or Timeout passes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Unquote decodes a JSON string.
func Unquote(t testing.TB, raw []byte) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("unquote %s: %v", raw, err)
	}
	return s
}

// JSResult is the report of one run of a JavaScript client script in the
// hub's testdata: its checks, in order.
type JSResult struct {
	Name   string            `json:"name"`
	OK     bool              `json:"ok"`
	IDs    map[string]string `json:"ids"`
	Error  string            `json:"error"`
	Checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail any    `json:"detail"`
	} `json:"checks"`
}

// JSOutput is the report of a JavaScript client script that ran several
// times.
type JSOutput = JSReport[JSResult]
