package aspnetclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// lpTransport receives by long polling: connect, then poll after poll,
// each a POST carrying the cursor and groups token, answered with one
// persistent response; it sends with POST /send.
type lpTransport struct {
	poster
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	pending   []byte // the connect's or reconnect's answer, not handed out yet
	buf       []byte
}

// dialLongPolling sends connect (or reconnect) as the first poll.
func dialLongPolling(ctx context.Context, c *Conn, reconnect bool) (*lpTransport, error) {
	t := &lpTransport{poster: poster{c: c}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	path := "connect"
	if reconnect {
		path = "reconnect"
	}
	stop := context.AfterFunc(ctx, t.cancel)
	body, err := t.poll(clientconn.TraceInto(t.ctx, ctx), path)
	if !stop() {
		err = ctx.Err()
	}
	if err != nil {
		t.close()
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, err)
	}
	t.pending = body
	return t, nil
}

func (t *lpTransport) name() string { return TransportLongPolling }

// next hands out the connect's answer, then polls.
func (t *lpTransport) next() ([]byte, error) {
	if t.pending != nil {
		b := t.pending
		t.pending = nil
		return b, nil
	}
	if err := t.pause(); err != nil {
		return nil, err
	}
	return t.poll(t.ctx, "poll")
}

// pause waits, before the next poll, the delay the last answer asked for
// (its L), as the JavaScript client does; an answer without L means
// none.
func (t *lpTransport) pause() error {
	d := t.c.longPollDelay
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-t.ctx.Done():
		return t.pollErr(t.ctx, "poll", t.ctx.Err())
	}
}

// pollDelay is the wait an envelope's L asks for before the next poll,
// at most the poll timeout, so no server can stall the reader for longer
// than one poll may take.
func (s *session) pollDelay(e *aspnet.Envelope) time.Duration {
	if !e.HasLongPollDelay {
		return 0
	}
	return time.Duration(min(e.LongPollDelay, s.pollTimeout.Milliseconds())) * time.Millisecond
}

// poll sends one poll (or connect, reconnect) bounded by the session's
// poll timeout and returns its answer.
func (t *lpTransport) poll(ctx context.Context, path string) ([]byte, error) {
	c := t.c
	pctx, cancel := context.WithTimeout(ctx, c.s.pollTimeout)
	defer cancel()
	res, err := c.request(pctx, http.MethodPost, c.s.requestURL(path, TransportLongPolling), t.form(path))
	if err != nil {
		return nil, t.pollErr(pctx, path, err)
	}
	defer res.Body.Close()
	c.o.Observer.HTTPResponse(path, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return nil, &TransportError{Request: path, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
			Err: clientconn.Refusal("unexpected HTTP status", res.StatusCode, "the server no longer has this connection")}
	}
	t.buf, err = readBounded(res.Body, t.buf[:0], c.o.MaxMessageSize)
	if err != nil {
		return nil, t.pollErr(pctx, path, err)
	}
	c.o.Observer.BytesReceived(len(t.buf))
	return t.buf, nil
}

// form is the poll's body: the cursor and groups token, once there are
// any.
func (t *lpTransport) form(path string) url.Values {
	v := url.Values{}
	if path == "connect" {
		return v
	}
	c := t.c
	c.tmu.Lock()
	defer c.tmu.Unlock()
	if c.cursor != "" {
		v.Set("messageId", c.cursor)
	}
	if c.groupsToken != "" {
		v.Set("groupsToken", c.groupsToken)
	}
	return v
}

func (t *lpTransport) pollErr(pctx context.Context, path string, err error) error {
	switch {
	case errors.Is(err, ErrProtocol):
		return err
	case t.ctx.Err() != nil:
		return fmt.Errorf("probe: longPolling %s: transport closed", path)
	case errors.Is(pctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: longPolling: no answer to a %s within %s", clientconn.ErrServerTimeout, path, t.c.s.pollTimeout)
	}
	return fmt.Errorf("%w: longPolling %s: %w", errDropped, path, err)
}

// setReadDeadline does nothing: a poll may wait for the server's
// connection timeout, which bounds each poll instead.
func (t *lpTransport) setReadDeadline(time.Time) {}

func (t *lpTransport) shutdown(time.Time) { t.close() }

func (t *lpTransport) close() { t.closeOnce.Do(t.cancel) }

// readBounded reads r into dst, failing with ErrProtocol beyond limit bytes.
func readBounded(r io.Reader, dst []byte, limit int64) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if int64(len(dst)) > limit {
			return nil, fmt.Errorf("%w: poll answer larger than %d bytes", ErrProtocol, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
