package throttle

import (
	"slices"
	"strings"
	"testing"
)

// The reasons are the only values hubprobe_throttled_total{reason} takes:
// four fixed, distinct, snake_case words, in the order the metrics
// pre-create them.
func TestReasonsAreTheFourBoundedLabelValues(t *testing.T) {
	want := [...]string{"http_429", "connection_limit", "message_limit", "closed_throttled"}
	if Reasons != want {
		t.Fatalf("Reasons = %q, want %q", Reasons, want)
	}
	if HTTP429 != want[0] || ConnectionLimit != want[1] || MessageLimit != want[2] || Closed != want[3] {
		t.Errorf("constants %q %q %q %q differ from Reasons", HTTP429, ConnectionLimit, MessageLimit, Closed)
	}
}

// The texts are the services' own words, as Azure SignalR Service and Web
// PubSub send them (and the reference hub copies them).
func TestServiceTexts(t *testing.T) {
	if ConnectionLimitText != "Connection count reaches limit." || MessageLimitText != "Message count reaches limit." {
		t.Errorf("texts %q and %q, want the services' words", ConnectionLimitText, MessageLimitText)
	}
}

// An HTTP 429 is always throttling: its body only picks the reason. A
// connection limit wins over a message limit when the body names both.
func TestFromHTTPBody(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{ConnectionLimitText, ConnectionLimit},
		{MessageLimitText, MessageLimit},
		{strings.ToUpper(ConnectionLimitText), ConnectionLimit},
		{"message LIMIT exceeded", MessageLimit},
		{"The connection limit of unit 1 is reached, and so is its message limit.", ConnectionLimit},
		{"", HTTP429},
		{"Too Many Requests", HTTP429},
		{"connection refused", HTTP429},  // names the subject, not a limit
		{"rate limit exceeded", HTTP429}, // a limit, of no subject hubprobe counts apart
	} {
		if got := FromHTTPBody(c.body); got != c.want {
			t.Errorf("FromHTTPBody(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}

// A close speaks of throttling only when it names a limit or throttling;
// then its reason is the limit it names. A message limit wins: a close for
// it often says "connection" too.
func TestFromCloseMessage(t *testing.T) {
	for _, c := range []struct {
		msg, want string
		ok        bool
	}{
		{MessageLimitText, MessageLimit, true},
		{ConnectionLimitText, ConnectionLimit, true},
		{"Connection closed with an error. " + MessageLimitText, MessageLimit, true},
		{"Throttled by the service", Closed, true},
		{"THROTTLING", Closed, true},
		{"Rate limit exceeded", Closed, true},
		{"", "", false},
		{"Server is shutting down.", "", false},
		{"Connection closed with an error.", "", false}, // no limit named
		{"limit", "", false},                            // a limit of nothing
		{"rate of 5 per second", "", false},
	} {
		reason, ok := FromCloseMessage(c.msg)
		if reason != c.want || ok != c.ok {
			t.Errorf("FromCloseMessage(%q) = %q, %v; want %q, %v", c.msg, reason, ok, c.want, c.ok)
		}
	}
}

// Whatever a server writes, the reason is one of Reasons: a server's words
// never become a label value.
func TestReasonsAreBoundedWhateverTheServerSays(t *testing.T) {
	for _, text := range []string{
		"x", "limit limit", "connection_limit", "http_429 message", "Throttled: message limit of 10/s",
		strings.Repeat("connection ", 100) + "limit", "\x00\xff limit connection",
	} {
		if got := FromHTTPBody(text); !isReason(got) {
			t.Errorf("FromHTTPBody(%q) = %q, not a reason", text, got)
		}
		if got, ok := FromCloseMessage(text); ok != isReason(got) {
			t.Errorf("FromCloseMessage(%q) = %q, %v: ok must mean a reason", text, got, ok)
		}
	}
}

func isReason(s string) bool { return slices.Contains(Reasons[:], s) }
