package aspnetclient

import (
	"errors"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// errDropped marks a transport that ended without the server saying so:
// the stream or socket went away, which a reconnect may mend.
var errDropped = errors.New("probe: transport dropped")

// TransportError is a request of an open connection that failed: a send
// POST, a poll, a reconnect (its Transport is empty: the request names it).
type TransportError = clientconn.TransportError

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

// ReconnectRefused says the connection ended for a failed reconnect, which
// clientconn.DropReason tells apart from a plain transport error.
func (e *ReconnectError) ReconnectRefused() bool { return true }

// InvocationError is an error the hub returned for an invocation (E).
type InvocationError struct{ Message string }

func (e *InvocationError) Error() string { return "probe: invocation failed: " + e.Message }
