package probe

import (
	"errors"
	"net/http"
	"strings"
)

// Throttle reasons. They are the only values hubprobe uses to label a
// throttled operation, so metrics stay bounded whatever a server says.
const (
	ThrottleHTTP429         = "http_429"
	ThrottleConnectionLimit = "connection_limit"
	ThrottleMessageLimit    = "message_limit"
	ThrottleClosed          = "closed_throttled"
)

// ClassifyThrottle tells whether err is the hub throttling the probe, and
// which reason applies. The texts matched are the ones Azure SignalR Service
// and Web PubSub send ("Connection count reaches limit.", "Message count
// reaches limit.").
func ClassifyThrottle(err error) (reason string, throttled bool) {
	if reason, ok := ClassifyRESTThrottle(err); ok {
		return reason, true
	}
	var ce *ConnectError
	if errors.As(err, &ce) && ce.StatusCode == http.StatusTooManyRequests {
		if mentionsLimit(ce.Body, "connection") {
			return ThrottleConnectionLimit, true
		}
		return ThrottleHTTP429, true
	}
	var te *TransportError
	if errors.As(err, &te) && te.StatusCode == http.StatusTooManyRequests {
		if mentionsLimit(te.Body, "connection") {
			return ThrottleConnectionLimit, true
		}
		return ThrottleHTTP429, true
	}
	var closeErr *CloseError
	if errors.As(err, &closeErr) {
		switch {
		case mentionsLimit(closeErr.Message, "message"):
			return ThrottleMessageLimit, true
		case mentionsLimit(closeErr.Message, "connection"):
			return ThrottleConnectionLimit, true
		case strings.Contains(strings.ToLower(closeErr.Message), "throttl"),
			mentionsLimit(closeErr.Message, "rate"):
			return ThrottleClosed, true
		}
	}
	return "", false
}

func mentionsLimit(text, subject string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, subject) && strings.Contains(t, "limit")
}
