package aspnetclient

import (
	"errors"
	"strconv"
)

// errDropped marks a transport that ended without the server saying so:
// the stream or socket went away, which a reconnect may mend.
var errDropped = errors.New("probe: transport dropped")

// TransportError is a request of an open connection that failed: a send
// POST, a poll, a reconnect. StatusCode and Body are set when the server
// refused it, so throttling can be classified.
type TransportError struct {
	Request    string // EndpointSend, "poll", "reconnect"
	StatusCode int
	Body       string // at most clientconn.MaxErrorBody bytes
	Err        error
}

func (e *TransportError) Error() string {
	msg := "probe: " + e.Request
	if e.StatusCode != 0 {
		msg += ": HTTP " + strconv.Itoa(e.StatusCode)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *TransportError) Unwrap() error { return e.Err }

// HTTPStatus is the response the request was refused with; 0 for none.
func (e *TransportError) HTTPStatus() (code int, body string) { return e.StatusCode, e.Body }

// ReconnectError ends a connection whose transport dropped and whose
// reconnect failed: Dropped is why the transport went, Err why the
// reconnect did not mend it (a refusal, or the server's disconnect
// timeout passing).
type ReconnectError struct {
	Dropped error
	Err     error
}

func (e *ReconnectError) Error() string {
	return "probe: reconnect failed: " + e.Err.Error() + " (after " + e.Dropped.Error() + ")"
}

func (e *ReconnectError) Unwrap() error { return e.Err }

// InvocationError is an error the hub returned for an invocation (E).
type InvocationError struct{ Message string }

func (e *InvocationError) Error() string { return "probe: invocation failed: " + e.Message }
