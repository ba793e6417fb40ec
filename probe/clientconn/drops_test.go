package clientconn

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

var errTestProtocol = errors.New("test protocol error")

type refusedReconnect struct{ error }

func (refusedReconnect) ReconnectRefused() bool { return true }
func (r refusedReconnect) Unwrap() error        { return r.error }

// Every way a connection ends maps to its one reason; what a reason
// cannot tell apart (a reset, an end of stream) is a transport drop.
func TestDropReason(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"close without error", &CloseError{}, DropServerClose},
		{"close with error", &CloseError{Message: "boom"}, DropServerError},
		{"close allowing reconnect", &CloseError{Message: "restart", AllowReconnect: true}, DropServerReconnect},
		{"disconnected message", fmt.Errorf("x: %w", &CloseError{Message: "bye", Disconnected: true}), DropDisconnected},
		{"closed for the message quota", &CloseError{Message: "Message count reaches limit."}, DropThrottled},
		{"server timeout", fmt.Errorf("%w: nothing received for 30s", ErrServerTimeout), DropServerTimeout},
		{"ping unanswered", fmt.Errorf("%w: no answer to a WebSocket ping", ErrStalled), DropKeepAlive},
		{"poll refused 429", &TransportError{Request: "poll", StatusCode: http.StatusTooManyRequests}, DropThrottled},
		{"poll refused 503", &TransportError{Request: "poll", StatusCode: http.StatusServiceUnavailable}, DropHTTP5xx},
		{"send refused 404", fmt.Errorf("wrapped: %w", &TransportError{Request: "send", StatusCode: http.StatusNotFound}), DropHTTPOther},
		{"reconnect refused 500", refusedReconnect{&TransportError{Request: "reconnect", StatusCode: 500}}, DropHTTP5xx},
		{"reconnect timed out", refusedReconnect{errors.New("disconnect timeout")}, DropReconnectRefused},
		{"reconnect refused 404", refusedReconnect{&TransportError{Request: "reconnect", StatusCode: 404}}, DropReconnectRefused},
		{"protocol", fmt.Errorf("%w: bad frame", errTestProtocol), DropProtocol},
		{"reset", fmt.Errorf("probe: connection lost: %w", io.ErrUnexpectedEOF), DropTransport},
	}
	isProtocol := func(err error) bool { return errors.Is(err, errTestProtocol) }
	for _, c := range cases {
		if got := DropReason(c.err, isProtocol); got != c.want {
			t.Errorf("%s: DropReason = %q, want %q", c.name, got, c.want)
		}
	}
	if got := DropReason(fmt.Errorf("%w", errTestProtocol), nil); got != DropTransport {
		t.Errorf("without a protocol test, DropReason = %q, want %q", got, DropTransport)
	}
}

// A stall reads as a server timeout to everything that asks for one.
func TestStalledIsAServerTimeout(t *testing.T) {
	if !errors.Is(ErrStalled, ErrServerTimeout) || ErrStalled.Error() != ErrServerTimeout.Error() {
		t.Errorf("ErrStalled %q is not an ErrServerTimeout", ErrStalled)
	}
}
