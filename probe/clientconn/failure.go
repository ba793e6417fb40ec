package clientconn

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/throttle"
)

// Connection phases named by ConnectError.Phase, the same for every client
// so that failures are counted alike.
const (
	PhaseNegotiate = "negotiate"
	PhaseTransport = "transport"
	PhaseHandshake = "handshake"
	// PhaseTimeout replaces the phase when the attempt failed because time
	// ran out (the caller's deadline, the handshake timeout, an HTTP
	// timeout); Err still says where.
	PhaseTimeout = "timeout"
)

// ErrServerTimeout ends a connection on which nothing arrived within the
// server timeout.
var ErrServerTimeout = errors.New("probe: server timeout")

// ConnectError is a failed Dial of any client. StatusCode and Body are
// set when the failure was an HTTP response (negotiate, the WebSocket
// upgrade, the event stream, the first poll, the handshake POST), so
// callers can classify throttling (HTTP 429, "Connection count reaches
// limit.").
type ConnectError struct {
	Phase string // PhaseNegotiate, PhaseTransport, PhaseHandshake or PhaseTimeout
	// Step is the timed phase (one of ConnectPhases) the attempt failed
	// in, when the client's PhaseClock knew it: a refused TCP connect
	// during negotiate is Phase negotiate, Step tcp.
	Step       string
	StatusCode int
	Body       string // at most the first MaxErrorBody bytes of the response body
	Err        error
}

func (e *ConnectError) Error() string {
	msg := "probe: connect failed (" + e.Phase + ")"
	if e.Step != "" && e.Step != e.Phase {
		msg += " in " + e.Step
	}
	if e.StatusCode != 0 {
		msg += ": HTTP " + strconv.Itoa(e.StatusCode)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ConnectError) Unwrap() error { return e.Err }

// HTTPStatus is the response the attempt was refused with; 0 for none.
func (e *ConnectError) HTTPStatus() (code int, body string) { return e.StatusCode, e.Body }

// TransportError ends an open connection whose HTTP request failed once
// connected: a send POST, a poll, the event stream, a reconnect. StatusCode
// and Body are set when the server refused it, so throttling can be
// classified.
type TransportError struct {
	Transport  string // the client's transport name; empty where the request says it all
	Request    string // the client's name for the request: "send", "poll", "sse", "reconnect"
	StatusCode int    // 0 when there was no response to blame
	Body       string // at most the first MaxErrorBody bytes of the response body
	Err        error
}

func (e *TransportError) Error() string {
	msg := "probe: " + e.Request
	if e.Transport != "" {
		msg = "probe: " + e.Transport + " " + e.Request
	}
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

// NewConnectError tags err with its phase, or with PhaseTimeout when the
// cause is running out of time.
func NewConnectError(phase string, err error) *ConnectError {
	if IsTimeout(err) {
		// The phase label becomes "timeout", so the text keeps the phase:
		// "Post: context deadline exceeded" alone does not say what hung.
		return &ConnectError{Phase: PhaseTimeout, Err: fmt.Errorf("%s did not finish in time: %w", phase, err)}
	}
	return &ConnectError{Phase: phase, Err: err}
}

// CloseError ends a connection the server closed saying why: a SignalR
// Close message, a Web PubSub close frame or disconnected message, classic
// SignalR's disconnect flag or error. Message is empty when the server
// closed without an error; Disconnected is true for a disconnected
// message or flag.
type CloseError struct {
	Message        string
	AllowReconnect bool
	Disconnected   bool
}

func (e *CloseError) Error() string {
	if e.Message == "" {
		return "probe: server closed the connection"
	}
	return "probe: server closed the connection: " + e.Message
}

// httpRefusal is an error that carries the HTTP response a request was
// refused with: ConnectError, and the SignalR client's transport errors.
type httpRefusal interface {
	error
	HTTPStatus() (code int, body string)
}

// ClassifyThrottle tells whether err, a failure of any client, is the
// hub throttling the probe, and which throttle reason applies. The texts
// matched are the ones Azure SignalR Service and Web PubSub send
// ("Connection count reaches limit.", "Message count reaches limit.").
// The REST clients' refusals are azure.ClassifyRESTThrottle's.
func ClassifyThrottle(err error) (reason string, throttled bool) {
	if body, ok := tooManyRequests(err); ok {
		return connect429Reason(body), true
	}
	var closeErr *CloseError
	if errors.As(err, &closeErr) {
		return throttle.FromCloseMessage(closeErr.Message)
	}
	return "", false
}

// tooManyRequests finds an HTTP 429 anywhere in err's chain: errors.As
// would stop at the first refusal, and a connect error without a status of
// its own may wrap a transport's 429 (a long-polling handshake's poll).
func tooManyRequests(err error) (body string, ok bool) {
	if r, isRefusal := err.(httpRefusal); isRefusal {
		if code, body := r.HTTPStatus(); code == http.StatusTooManyRequests {
			return body, true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return tooManyRequests(inner)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if body, ok := tooManyRequests(inner); ok {
				return body, true
			}
		}
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

// Observer receives what a connection of any client sees on the wire,
// so callers can count HTTP responses and bandwidth without the clients
// knowing about their metrics. Implementations must be safe for concurrent
// use and must not block: they are called from the read goroutine and from
// every writer.
type Observer interface {
	// HTTPResponse reports the status code of one HTTP response:
	// "negotiate", "upgrade", or for server-sent events and long polling
	// the endpoint of the request.
	HTTPResponse(endpoint string, code int)
	// BytesSent reports the payload size of one transport frame written:
	// a WebSocket message, or the body of a POST the server accepted.
	BytesSent(n int)
	// BytesReceived reports the payload size of one transport frame read:
	// a WebSocket message, the data of one server-sent event, or the body
	// of one poll (0 for an empty one).
	BytesReceived(n int)
	// Connected reports where the time of a successful Dial went, by
	// phase.
	Connected(t ConnectTiming)
	// RoundTrip reports one round trip of the connection's transport, measured
	// with what the hub's application code never sees: a WebSocket ping and
	// its pong, or for server-sent events and long polling a request the
	// connection dispatcher answers at once (see RoundTripInterval).
	RoundTrip(d time.Duration)
}
