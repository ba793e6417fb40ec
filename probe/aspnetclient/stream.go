package aspnetclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// streamTransport receives over one endless GET, as server-sent events
// (data: lines) or as Forever Frame (an HTML page of <script> blocks), and
// sends with POST /send.
type streamTransport struct {
	kind   string // TransportSSE or TransportForeverFrame
	ctx    context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	buf    []byte // read, parsed up to r
	r      int
	max    int
	poster
	deadline  clientconn.ReadDeadline
	inBody    bool // Forever Frame: past the page's preamble
	timedOut  atomic.Bool
	closeOnce sync.Once
}

// frameCount numbers Forever Frame requests, as the JavaScript client
// numbers its iframes (frameId).
var frameCount atomic.Uint64

// dialStream sends connect (or reconnect) as the endless GET and checks
// the response's type.
func dialStream(ctx context.Context, c *Conn, kind string, reconnect bool) (*streamTransport, error) {
	path, extra := "connect", []string(nil)
	if reconnect {
		path, extra = "reconnect", c.cursorQuery()
	}
	u := c.s.requestURL(path, kind, extra...)
	u.RawQuery += "&" + tid()
	if kind == TransportForeverFrame {
		u.RawQuery += "&frameId=" + strconv.FormatUint(frameCount.Add(1), 10)
	}
	t := &streamTransport{kind: kind, poster: poster{c: c}}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.deadline.Expire = t.expire
	res, err := openStream(ctx, t, c, u.String())
	if err != nil {
		t.close()
		return nil, err
	}
	if err := checkStreamType(kind, res.Header.Get("Content-Type")); err != nil {
		_ = res.Body.Close()
		t.close()
		return nil, &clientconn.ConnectError{Phase: clientconn.PhaseTransport, StatusCode: res.StatusCode, Err: err}
	}
	t.body = res.Body
	t.max = int(c.o.MaxMessageSize)
	return t, nil
}

// openStream sends the GET on the transport's own context, traced into
// ctx's phase, with ctx bounding the wait for its response headers.
func openStream(ctx context.Context, t *streamTransport, c *Conn, rawURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(clientconn.TraceInto(t.ctx, ctx), http.MethodGet, rawURL, http.NoBody)
	if err != nil {
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, err)
	}
	req.Header = clientconn.RequestHeaders(c.o.Headers, c.s.accessToken)
	if t.kind == TransportSSE {
		req.Header.Set("Accept", "text/event-stream")
	}
	stop := context.AfterFunc(ctx, t.cancel)
	res, err := c.o.TransportHTTPClient().Do(req)
	if !stop() {
		if res != nil {
			_ = res.Body.Close()
		}
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, ctx.Err())
	}
	if err != nil {
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, err)
	}
	c.o.Observer.HTTPResponse(t.kind, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		return nil, statusError(clientconn.PhaseTransport, res)
	}
	return res, nil
}

func checkStreamType(kind, contentType string) error {
	want := "text/event-stream"
	if kind == TransportForeverFrame {
		want = "text/html"
	}
	if mediaType, _, err := mime.ParseMediaType(contentType); err != nil || mediaType != want {
		return fmt.Errorf("server answered the %s request with Content-Type %q, not %s", wireNames[kind], contentType, want)
	}
	return nil
}

func (t *streamTransport) name() string { return t.kind }

// next returns the next message of the stream: the data of an event, or
// the frame of a <script>r(c, ...);</script> block, valid until the next
// call.
func (t *streamTransport) next() ([]byte, error) {
	for {
		msg, ok, err := t.parse()
		if err != nil || ok {
			return msg, err
		}
		if err := t.fill(); err != nil {
			return nil, t.readErr(err)
		}
	}
}

// parse takes the next message out of the bytes read so far; ok is false
// when they hold none yet. SSE's initialized event and the Forever Frame
// page's preamble carry none.
func (t *streamTransport) parse() (msg []byte, ok bool, err error) {
	for {
		pending := t.buf[t.r:]
		var rest []byte
		switch {
		case t.kind == TransportSSE:
			msg, rest, ok = aspnet.NextSSEData(pending)
		case !t.inBody:
			_, rest, ok, err = aspnet.ParseForeverFramePreamble(pending)
			t.inBody = ok
			ok = false
			if err == nil && t.inBody {
				t.r = len(t.buf) - len(rest)
				continue
			}
		default:
			msg, rest, ok, err = aspnet.NextForeverFrameScript(pending)
		}
		if err != nil || !ok {
			return nil, false, err
		}
		t.r = len(t.buf) - len(rest)
		if len(msg) > t.max { // one read may have completed it past the limit
			return nil, false, t.tooLarge()
		}
		if t.kind == TransportSSE && string(msg) == aspnet.SSEInitializedData {
			continue
		}
		t.c.o.Observer.BytesReceived(len(msg))
		return msg, true, nil
	}
}

// fill reads more of the stream, keeping what is not parsed yet; no
// message may outgrow the connection's MaxMessageSize.
func (t *streamTransport) fill() error {
	t.buf = t.buf[:copy(t.buf, t.buf[t.r:])]
	t.r = 0
	if len(t.buf) > t.max {
		return t.tooLarge()
	}
	if cap(t.buf)-len(t.buf) < streamReadSpace {
		t.buf = append(t.buf, make([]byte, streamReadSpace)...)[:len(t.buf)]
	}
	n, err := t.body.Read(t.buf[len(t.buf):cap(t.buf)])
	t.buf = t.buf[:len(t.buf)+n]
	if n > 0 {
		return nil
	}
	return err
}

func (t *streamTransport) tooLarge() error {
	return fmt.Errorf("%w: a %s message larger than %d bytes", ErrProtocol, wireNames[t.kind], t.max)
}

// streamReadSpace is the least free space one read of the stream gets.
const streamReadSpace = 4096

func (t *streamTransport) readErr(err error) error {
	switch {
	case t.timedOut.Load():
		return fmt.Errorf("probe: %s: read deadline passed: %w", t.kind, os.ErrDeadlineExceeded)
	case errors.Is(err, ErrProtocol):
		return err
	case err == io.EOF:
		return fmt.Errorf("%w: the server ended the %s stream", errDropped, wireNames[t.kind])
	}
	return fmt.Errorf("%w: %s stream: %w", errDropped, wireNames[t.kind], err)
}

func (t *streamTransport) setReadDeadline(d time.Time) { t.deadline.Set(d) }

func (t *streamTransport) expire() {
	t.timedOut.Store(true)
	t.cancel()
}

func (t *streamTransport) shutdown(time.Time) { t.close() }

func (t *streamTransport) close() {
	t.closeOnce.Do(func() {
		t.cancel()
		t.deadline.Stop()
		if t.body != nil {
			_ = t.body.Close()
		}
	})
}
