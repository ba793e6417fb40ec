package scenarios

// Tests of what a run concludes: whether a failure was throttling.

import (
	"fmt"
	"testing"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/throttle"
)

// A run's failures are classified whichever part refused: a REST call
// (its body decides the reason, the message limit included) or a client
// connection (a 429 while connecting is the connection quota or plain).
func TestThrottledByRESTAndClients(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		reason string
		ok     bool
	}{
		{"REST message limit", fmt.Errorf("send: %w", &azure.RESTError{StatusCode: 429, Body: throttle.MessageLimitText}), throttle.MessageLimit, true},
		{"REST 503", &azure.RESTError{StatusCode: 503}, "", false},
		{"connect 429 naming the message limit", &clientconn.ConnectError{Phase: clientconn.PhaseTransport, StatusCode: 429, Body: throttle.MessageLimitText}, throttle.HTTP429, true},
		{"closed for the connection limit", &clientconn.CloseError{Message: throttle.ConnectionLimitText}, throttle.ConnectionLimit, true},
		{"server timeout", clientconn.ErrServerTimeout, "", false},
	} {
		if reason, ok := throttledBy(c.err); reason != c.reason || ok != c.ok {
			t.Errorf("%s: throttledBy = %q, %v; want %q, %v", c.name, reason, ok, c.reason, c.ok)
		}
	}
}
