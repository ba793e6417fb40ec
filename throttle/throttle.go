// Package throttle holds the bounded throttle reasons hubprobe counts and
// the rules that map a service's own words onto them. Every package that
// sees throttling (the SignalR client, the Azure REST client, the reference
// hub, the scenarios) uses these values, so a metric label can never take a
// value a server chose. It also says how long to keep away from a service
// that throttled: its Retry-After, or a backoff when it gave none.
package throttle

import "strings"

// The reasons, the only values of hubprobe_throttled_total{reason}.
const (
	HTTP429         = "http_429"
	ConnectionLimit = "connection_limit"
	MessageLimit    = "message_limit"
	Closed          = "closed_throttled"
)

// Reasons lists every reason, in the order the metrics pre-create them.
var Reasons = [...]string{HTTP429, ConnectionLimit, MessageLimit, Closed}

// Texts Azure SignalR Service and Web PubSub send when they throttle.
const (
	ConnectionLimitText = "Connection count reaches limit."
	MessageLimitText    = "Message count reaches limit."
)

// FromHTTPBody classifies the body of an HTTP 429: a connection or message
// limit when the body names one, http_429 otherwise.
func FromHTTPBody(body string) string {
	switch {
	case mentionsLimit(body, "connection"):
		return ConnectionLimit
	case mentionsLimit(body, "message"):
		return MessageLimit
	}
	return HTTP429
}

// FromCloseMessage classifies the message of a server's close: ok is false
// when the close does not speak of throttling at all.
func FromCloseMessage(msg string) (reason string, ok bool) {
	switch {
	case mentionsLimit(msg, "message"):
		return MessageLimit, true
	case mentionsLimit(msg, "connection"):
		return ConnectionLimit, true
	case strings.Contains(strings.ToLower(msg), "throttl"), mentionsLimit(msg, "rate"):
		return Closed, true
	}
	return "", false
}

func mentionsLimit(text, subject string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, subject) && strings.Contains(t, "limit")
}
