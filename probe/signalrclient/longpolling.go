package signalrclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// DefaultPollTimeout bounds one long-polling request, as in the SignalR
// JavaScript client; servers answer an idle poll after 90 s.
const DefaultPollTimeout = 100 * time.Second

// lpTransport receives by long polling (each GET answers with whatever
// records are waiting, or nothing when the server's poll timeout passes)
// and sends with HTTP POST.
type lpTransport struct {
	*httpTransport
	pollTimeout time.Duration
	pollCtx     context.Context
	pollCancel  context.CancelFunc
	res         *http.Response // the poll whose body is being read
	first       bool           // res is the first poll, not yet handed out
	body        pollBody
}

// dialLongPolling sends the first poll, traced with ctx's httptrace, which
// the server answers (empty) once the connection is set up; failures are
// *clientconn.ConnectError.
func dialLongPolling(ctx context.Context, o *Options, target *transportTarget) (*lpTransport, error) {
	t := &lpTransport{httpTransport: newHTTPTransport(o, target, TransportLongPolling), pollTimeout: o.PollTimeout}
	t.body.t = t
	req, err := t.newPoll(clientconn.TraceInto(t.ctx, ctx))
	if err != nil {
		t.close()
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, err)
	}
	res, err := t.openStreamRequest(ctx, o, req, EndpointPoll)
	if err != nil {
		return nil, err
	}
	t.res, t.first = res, true
	return t, nil
}

// newPoll makes the next poll request, with a cache-buster as the
// JavaScript client adds, on a context of its own, from parent (the
// transport's), bounded by PollTimeout.
func (t *lpTransport) newPoll(parent context.Context) (*http.Request, error) {
	t.pollCtx, t.pollCancel = context.WithTimeout(parent, t.pollTimeout)
	u := t.url + "&_=" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	return t.newRequest(t.pollCtx, http.MethodGet, u, nil, t.header)
}

// nextFrame finishes the previous poll and returns the body of the next
// one with status 200. An empty body (the server's poll timeout) is a
// frame of nothing: it still shows the server is there.
func (t *lpTransport) nextFrame() (int, io.Reader, error) {
	if t.first {
		t.first = false
		return t.frameType, &t.body, nil
	}
	t.endPoll()
	for {
		res, err := t.poll()
		if err != nil {
			return 0, nil, err
		}
		if res != nil {
			t.res = res
			return t.frameType, &t.body, nil
		}
	}
}

// poll sends one poll. It returns nil and no error when the poll timed
// out on the client's side, to be sent again like the JavaScript client
// does.
func (t *lpTransport) poll() (*http.Response, error) {
	req, err := t.newPoll(t.ctx)
	if err != nil {
		return nil, err
	}
	res, err := t.long.Do(req)
	if err != nil {
		timedOut := t.pollTimedOut()
		t.pollCancel()
		if timedOut {
			return nil, nil
		}
		return nil, t.readErr(err)
	}
	t.obs.HTTPResponse(EndpointPoll, res.StatusCode)
	if res.StatusCode == http.StatusOK {
		return res, nil
	}
	defer t.pollCancel()
	defer res.Body.Close()
	if res.StatusCode == http.StatusNoContent {
		return nil, &TransportError{Transport: TransportLongPolling, Request: EndpointPoll, StatusCode: res.StatusCode,
			Err: errors.New("the server ended the connection")}
	}
	return nil, t.requestError(EndpointPoll, res)
}

func (t *lpTransport) pollTimedOut() bool {
	return errors.Is(t.pollCtx.Err(), context.DeadlineExceeded) && t.ctx.Err() == nil
}

func (t *lpTransport) endPoll() {
	if t.res != nil {
		_ = t.res.Body.Close()
		t.res = nil
	}
	if t.pollCancel != nil {
		t.pollCancel()
	}
}

// shutdown lets queued sends (the Close message) go out, then asks the
// server to end the connection; it answers the outstanding poll with 204.
func (t *lpTransport) shutdown(deadline time.Time) {
	t.flushUntil(deadline)
	t.sendDelete(deadline)
}

// goodbye tells the server to drop a connection whose bytes made no sense.
func (t *lpTransport) goodbye(reason error) {
	if errors.Is(reason, signalr.ErrProtocol) {
		t.sendDelete(time.Now().Add(clientconn.GoodbyeWait))
	}
}

// pollBody reads the current poll's body, explaining its failures.
type pollBody struct{ t *lpTransport }

func (b *pollBody) Read(p []byte) (int, error) {
	n, err := b.t.res.Body.Read(p)
	if err != nil && err != io.EOF {
		err = b.t.bodyErr(err)
	}
	return n, err
}

func (t *lpTransport) bodyErr(err error) error {
	if f := t.failure.Load(); f != nil {
		return *f
	}
	if t.pollTimedOut() {
		return fmt.Errorf("probe: longpolling: a poll response took longer than the poll timeout (%s)", t.pollTimeout)
	}
	return redact.URLError(err)
}
