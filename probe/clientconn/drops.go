package clientconn

import (
	"errors"
	"net/http"
)

// Why an open connection ended without the probe asking: the bounded
// values of hubprobe_connection_drops_total{reason}, the same for every
// client.
const (
	// DropServerClose: the server closed the connection saying nothing
	// wrong (a SignalR Close message or WebSocket close frame without an
	// error).
	DropServerClose = "server_close"
	// DropServerError: the server closed it with an error.
	DropServerError = "server_error"
	// DropServerReconnect: the server closed it and allowed the client
	// to reconnect (a SignalR Close message with allowReconnect).
	DropServerReconnect = "server_reconnect"
	// DropDisconnected: the server said the connection is disconnected
	// (Web PubSub's disconnected message, classic SignalR's disconnect
	// flag).
	DropDisconnected = "disconnected"
	// DropThrottled: the server closed it for a connection or message
	// quota.
	DropThrottled = "throttled"
	// DropServerTimeout: nothing arrived within the server timeout.
	DropServerTimeout = "server_timeout"
	// DropKeepAlive: a keep-alive, a ping or a write went unanswered
	// (ErrStalled): the server stopped reading.
	DropKeepAlive = "keepalive"
	// DropHTTP429, DropHTTP5xx and DropHTTPOther: a request of the open
	// connection (a poll, a send, a reconnect) was refused with that
	// HTTP status.
	DropHTTP429   = "http_429"
	DropHTTP5xx   = "http_5xx"
	DropHTTPOther = "http_other"
	// DropReconnectRefused: the transport dropped and the protocol's own
	// reconnect did not mend it (classic SignalR).
	DropReconnectRefused = "reconnect_refused"
	// DropProtocol: the server sent bytes the protocol does not allow.
	DropProtocol = "protocol"
	// DropTransport: the transport failed: a reset, an end of stream, a
	// read or write error.
	DropTransport = "transport"
)

// DropReasons lists every drop reason.
var DropReasons = [...]string{
	DropServerClose, DropServerError, DropServerReconnect, DropDisconnected, DropThrottled,
	DropServerTimeout, DropKeepAlive, DropHTTP429, DropHTTP5xx, DropHTTPOther,
	DropReconnectRefused, DropProtocol, DropTransport,
}

// ErrStalled ends a connection whose server stopped reading or answering:
// a write that did not finish in time, a ping or a send without an
// answer. It is an ErrServerTimeout too, and reads as one.
var ErrStalled error = stalled{}

type stalled struct{}

func (stalled) Error() string { return ErrServerTimeout.Error() }
func (stalled) Unwrap() error { return ErrServerTimeout }

// Reconnect refusals: a client's error for a transport that dropped and
// could not be reconnected says so by implementing it.
type reconnectRefusal interface{ ReconnectRefused() bool }

// DropReason is why a connection that ended with err was dropped, one of
// DropReasons; protocol tells the client's protocol errors, which this
// package does not know.
func DropReason(err error, protocol func(error) bool) string {
	var closeErr *CloseError
	var refusal reconnectRefusal
	switch {
	case isThrottle(err):
		return DropThrottled
	case errors.As(err, &closeErr):
		return closeReason(closeErr)
	case errors.Is(err, ErrStalled):
		return DropKeepAlive
	case errors.Is(err, ErrServerTimeout):
		return DropServerTimeout
	}
	code := refusedWith(err)
	switch {
	case errors.As(err, &refusal) && refusal.ReconnectRefused() && code != http.StatusTooManyRequests && code < 500:
		// The server no longer knows the connection: what status it
		// answers the reconnect with is its own way of saying so.
		return DropReconnectRefused
	case code != 0:
		return httpReason(code)
	case protocol != nil && protocol(err):
		return DropProtocol
	}
	return DropTransport
}

func isThrottle(err error) bool {
	_, throttled := ClassifyThrottle(err)
	return throttled
}

func closeReason(e *CloseError) string {
	switch {
	case e.Disconnected:
		return DropDisconnected
	case e.AllowReconnect:
		return DropServerReconnect
	case e.Message != "":
		return DropServerError
	}
	return DropServerClose
}

// refusedWith is the HTTP status of the first refusal in err's chain, 0
// for none.
func refusedWith(err error) int {
	var r httpRefusal
	if !errors.As(err, &r) {
		return 0
	}
	code, _ := r.HTTPStatus()
	return code
}

func httpReason(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return DropHTTP429
	case code >= 500:
		return DropHTTP5xx
	}
	return DropHTTPOther
}
