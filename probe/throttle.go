package probe

import (
	"errors"
	"net/http"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/throttle"
)

// ClassifyThrottle tells whether err is the hub throttling the probe, and
// which throttle reason applies. The texts matched are the ones Azure
// SignalR Service and Web PubSub send ("Connection count reaches limit.",
// "Message count reaches limit.").
func ClassifyThrottle(err error) (reason string, throttled bool) {
	if reason, ok := azure.ClassifyRESTThrottle(err); ok {
		return reason, true
	}
	var ce *ConnectError
	if errors.As(err, &ce) && ce.StatusCode == http.StatusTooManyRequests {
		return connect429Reason(ce.Body), true
	}
	var te *TransportError
	if errors.As(err, &te) && te.StatusCode == http.StatusTooManyRequests {
		return connect429Reason(te.Body), true
	}
	var closeErr *CloseError
	if errors.As(err, &closeErr) {
		return throttle.FromCloseMessage(closeErr.Message)
	}
	return "", false
}

// connect429Reason is the reason of a 429 while connecting: the connection
// quota when the body names it, a plain 429 otherwise (a message limit does
// not apply to a connection that is not open yet).
func connect429Reason(body string) string {
	if reason := throttle.FromHTTPBody(body); reason == throttle.ConnectionLimit {
		return reason
	}
	return throttle.HTTP429
}
