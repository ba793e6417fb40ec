package webpubsubclient

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

var (
	// ErrProtocol ends a connection on which the service sent bytes that
	// break the subprotocol: a frame that is not one, a binary frame, an
	// ack for an ackId never sent, a frame only clients send.
	ErrProtocol = errors.New("webpubsub client: protocol violation")

	// ErrForbidden matches (with errors.Is) an *AckError of that name.
	ErrForbidden = errors.New("webpubsub client: " + webpubsub.ErrorForbidden)
	// ErrInternalServerError matches an *AckError of that name.
	ErrInternalServerError = errors.New("webpubsub client: " + webpubsub.ErrorInternalServerError)
	// ErrInvocationFailed matches an *AckError of that name.
	ErrInvocationFailed = errors.New("webpubsub client: " + webpubsub.ErrorInvocationFailed)
)

// AckError is a request the service acknowledged as failed. A Duplicate
// ack is not one: the request took effect before, as the official client
// treats it.
type AckError struct {
	Op      string // "join group", "leave group", "send to group", "send event"
	Name    string // webpubsub.ErrorForbidden, ...; the service may add names
	Message string
}

// maxQuoted bounds how much of the service's text an error repeats.
const maxQuoted = 200

func (e *AckError) Error() string {
	msg := "webpubsub client: " + e.Op + " refused: " + strconv.Quote(limit(e.Name, 64))
	if e.Message != "" {
		msg += ": " + strconv.Quote(limit(e.Message, maxQuoted))
	}
	return msg
}

// Is matches the sentinel of e's error name.
func (e *AckError) Is(target error) bool {
	switch target {
	case ErrForbidden:
		return e.Name == webpubsub.ErrorForbidden
	case ErrInternalServerError:
		return e.Name == webpubsub.ErrorInternalServerError
	case ErrInvocationFailed:
		return e.Name == webpubsub.ErrorInvocationFailed
	}
	return false
}

// limit cuts s to at most n bytes, on a rune boundary.
func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// connectError tags err with its phase, or with clientconn.PhaseTimeout when
// the cause is running out of time (the text then keeps the phase).
func connectError(phase string, err error) *clientconn.ConnectError {
	if clientconn.IsTimeout(err) {
		return &clientconn.ConnectError{Phase: clientconn.PhaseTimeout, Err: fmt.Errorf("%s did not finish in time: %w", phase, err)}
	}
	return &clientconn.ConnectError{Phase: phase, Err: err}
}

// closedByService describes a WebSocket close frame that came without a
// disconnected message. Its reason text, when there is one, becomes a
// *clientconn.CloseError so a throttling reason is classified like one given
// in a disconnected message.
func closedByService(e *websocket.CloseError) error {
	if e.Text == "" {
		return fmt.Errorf("webpubsub client: the service closed the WebSocket (code %d) without a reason: %w", e.Code, &clientconn.CloseError{})
	}
	return fmt.Errorf("webpubsub client: the service closed the WebSocket (code %d): %w", e.Code, &clientconn.CloseError{Message: limit(e.Text, maxQuoted)})
}
