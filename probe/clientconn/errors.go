package clientconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

// ErrClosed is returned by calls on a connection of any client that has
// ended, joined with the reason it ended. Like every failure the clients
// share, its text starts "probe:", the name their errors have always had.
var ErrClosed = errors.New("probe: connection closed")

// MaxErrorBody bounds what a refused response's body contributes to an
// error: enough for "Connection count reaches limit.", which throttle
// classification looks for.
const MaxErrorBody = 512

// IsTimeout reports whether err is running out of time: a context
// deadline, a passed I/O deadline or a network timeout.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ErrorBody is the start of res's body (at most MaxErrorBody bytes), what
// an error about the response quotes of it.
func ErrorBody(res *http.Response) string {
	if res.Body == nil {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, MaxErrorBody))
	return string(body)
}

// Refusal is the error of a response with an unexpected status: what
// failed and the status, and for a 404, the usual sign of a wrong URL,
// notFoundHint in parentheses.
func Refusal(what string, status int, notFoundHint string) error {
	msg := fmt.Sprintf("%s %d", what, status)
	if status == http.StatusNotFound {
		msg += " (" + notFoundHint + ")"
	}
	return errors.New(msg)
}
