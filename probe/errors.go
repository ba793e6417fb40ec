package probe

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/clientconn"
)

// Connection phases named by ConnectError.Phase.
const (
	PhaseNegotiate = "negotiate"
	PhaseTransport = "transport"
	PhaseHandshake = "handshake"
	// PhaseTimeout replaces the phase when the attempt failed because time
	// ran out (the caller's deadline, HandshakeTimeout, an HTTP timeout);
	// Err still says where.
	PhaseTimeout = "timeout"
)

var (
	// ErrClosed is returned by calls on a connection that has ended; it is
	// joined with the reason the connection ended, if there was one. The
	// Web PubSub client returns it too.
	ErrClosed = clientconn.ErrClosed
	// ErrServerTimeout ends a connection on which nothing arrived within
	// Options.ServerTimeout.
	ErrServerTimeout = errors.New("probe: server timeout")
	// ErrUploadNotStarted is returned when an Upload is used before the
	// invocation it belongs to was sent.
	ErrUploadNotStarted = errors.New("probe: upload is not attached to a sent invocation")
	// ErrUploadDone is returned when an Upload is used after Complete.
	ErrUploadDone = errors.New("probe: upload already completed")
)

// ConnectError is a failed Dial. StatusCode and Body are set when the
// failure was an HTTP response (negotiate, the WebSocket upgrade, the event
// stream, the first poll, the handshake POST), so callers can classify
// throttling (HTTP 429, "Connection count reaches limit.").
type ConnectError struct {
	Phase      string // PhaseNegotiate, PhaseTransport, PhaseHandshake or PhaseTimeout
	StatusCode int
	Body       string // at most the first 512 bytes of the response body
	Err        error
}

func (e *ConnectError) Error() string {
	msg := "probe: connect failed (" + e.Phase + ")"
	if e.StatusCode != 0 {
		msg += ": HTTP " + strconv.Itoa(e.StatusCode)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ConnectError) Unwrap() error { return e.Err }

// CloseError ends a connection on which the server sent a Close message.
// Message is empty when the server closed without an error.
type CloseError struct {
	Message        string
	AllowReconnect bool
}

func (e *CloseError) Error() string {
	if e.Message == "" {
		return "probe: server closed the connection"
	}
	return "probe: server closed the connection: " + e.Message
}

// InvocationError is an error the hub returned in a Completion.
type InvocationError struct{ Message string }

func (e *InvocationError) Error() string { return "probe: invocation failed: " + e.Message }

// newConnectError tags err with its phase, or with PhaseTimeout when the
// cause is running out of time.
func newConnectError(phase string, err error) *ConnectError {
	if clientconn.IsTimeout(err) {
		// The phase label becomes "timeout", so the text keeps the phase:
		// "Post: context deadline exceeded" alone does not say what hung.
		return &ConnectError{Phase: PhaseTimeout, Err: fmt.Errorf("%s did not finish in time: %w", phase, err)}
	}
	return &ConnectError{Phase: phase, Err: err}
}
