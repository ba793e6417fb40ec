package clientconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/throttle"
)

// refusedRequest stands for the SignalR client's transport errors: any
// error that carries the response it was refused with.
type refusedRequest struct{ code int }

func (e refusedRequest) Error() string             { return fmt.Sprintf("refused %d", e.code) }
func (e refusedRequest) HTTPStatus() (int, string) { return e.code, "" }

func TestClassifyThrottle(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		reason string
		ok     bool
	}{
		{"connection quota", &ConnectError{Phase: PhaseNegotiate, StatusCode: 429, Body: throttle.ConnectionLimitText}, throttle.ConnectionLimit, true},
		{"429 naming the message limit while connecting", &ConnectError{Phase: PhaseTransport, StatusCode: 429, Body: throttle.MessageLimitText}, throttle.HTTP429, true},
		{"wrapped plain 429", fmt.Errorf("dial: %w", &ConnectError{Phase: PhaseTransport, StatusCode: 429}), throttle.HTTP429, true},
		{"another client's refused request", fmt.Errorf("send: %w", refusedRequest{429}), throttle.HTTP429, true},
		{"a connect error wrapping a transport's 429", &ConnectError{Phase: PhaseHandshake, Err: refusedRequest{429}}, throttle.HTTP429, true},
		{"joined with a 429", errors.Join(errors.New("first"), refusedRequest{429}), throttle.HTTP429, true},
		{"503 is not throttling", &ConnectError{Phase: PhaseNegotiate, StatusCode: 503, Body: throttle.ConnectionLimitText}, "", false},
		{"close for the message limit", &CloseError{Message: throttle.MessageLimitText}, throttle.MessageLimit, true},
		{"close without an error", &CloseError{}, "", false},
		{"server timeout", ErrServerTimeout, "", false},
	} {
		reason, ok := ClassifyThrottle(c.err)
		if reason != c.reason || ok != c.ok {
			t.Errorf("%s: ClassifyThrottle = %q, %v; want %q, %v", c.name, reason, ok, c.reason, c.ok)
		}
	}
}

// A connect that ran out of time is counted as a timeout, and its text
// still names the phase that hung.
func TestNewConnectErrorKeepsThePhaseOfATimeout(t *testing.T) {
	err := NewConnectError(PhaseHandshake, fmt.Errorf("read: %w", context.DeadlineExceeded))
	if err.Phase != PhaseTimeout || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "(timeout): handshake did not finish in time: read: context deadline exceeded") {
		t.Fatalf("got phase %q, %q", err.Phase, err)
	}
	if err := NewConnectError(PhaseTransport, errors.New("refused")); err.Phase != PhaseTransport {
		t.Fatalf("a plain failure got phase %q", err.Phase)
	}
}

// Both SignalR clients end a connection with a TransportError: its text
// names the transport when the request alone does not, and a 429 POST is
// throttling whichever client sent it.
func TestTransportErrorTextAndThrottle(t *testing.T) {
	cause := errors.New("reset")
	for _, c := range []struct {
		err  *TransportError
		want string
	}{
		{&TransportError{Transport: "serverSentEvents", Request: "send", StatusCode: 500, Err: cause}, "probe: serverSentEvents send: HTTP 500: reset"},
		{&TransportError{Request: "reconnect", StatusCode: 403}, "probe: reconnect: HTTP 403"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if !errors.Is(&TransportError{Request: "poll", Err: cause}, cause) {
		t.Error("TransportError does not unwrap to its cause")
	}
	if reason, ok := ClassifyThrottle(fmt.Errorf("send: %w", &TransportError{Request: "send", StatusCode: 429})); !ok || reason != throttle.HTTP429 {
		t.Errorf("a refused POST classified as %q, %v; want %q", reason, ok, throttle.HTTP429)
	}
}
