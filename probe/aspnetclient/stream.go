package aspnetclient

import (
	"bufio"
	"bytes"
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
	lines  lineReader
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
	t.lines.init(res.Body, int(c.o.MaxMessageSize))
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
	res, err := c.httpClient().Do(req)
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
// the object of a <script>r(c, ...);</script> block.
func (t *streamTransport) next() ([]byte, error) {
	for {
		line, err := t.lines.next()
		if err != nil {
			return nil, t.readErr(err)
		}
		msg, ok, err := t.message(line)
		if err != nil || ok {
			return msg, err
		}
	}
}

// message picks the message out of one line; ok is false for lines that
// carry none (blank lines, the page's preamble, SSE's initialized event).
func (t *streamTransport) message(line []byte) ([]byte, bool, error) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) == 0 {
		return nil, false, nil
	}
	if t.kind == TransportSSE {
		return sseData(line, t.poster.c.o.Observer)
	}
	if !t.inBody {
		t.inBody = bytes.HasSuffix(line, []byte("<body>"))
		return nil, false, nil
	}
	msg, ok := bytes.CutPrefix(line, []byte("<script>r(c, "))
	if msg, found := bytes.CutSuffix(msg, []byte(");</script>")); ok && found {
		t.poster.c.o.Observer.BytesReceived(len(msg))
		return msg, true, nil
	}
	return nil, false, fmt.Errorf("%w: foreverFrame line is not a <script>r(c, ...);</script> block: %.40q", ErrProtocol, line)
}

// sseData reads one line of the event stream: data lines carry a
// message, except the "initialized" event every (re)connect starts with;
// other fields and comments carry none.
func sseData(line []byte, obs clientconn.Observer) ([]byte, bool, error) {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil, false, nil
	}
	data = bytes.TrimPrefix(data, []byte(" "))
	if string(data) == "initialized" {
		return nil, false, nil
	}
	obs.BytesReceived(len(data))
	return data, true, nil
}

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

// lineReader reads lines of at most max bytes.
type lineReader struct {
	r    *bufio.Reader
	max  int
	long []byte
}

func (l *lineReader) init(r io.Reader, max int) {
	l.r, l.max = bufio.NewReaderSize(r, 4096), max
}

// next returns the next line with its end, valid until the next call.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	l.long = append(l.long[:0], line...)
	for err == bufio.ErrBufferFull {
		if len(l.long) > l.max {
			return nil, fmt.Errorf("%w: line longer than %d bytes", ErrProtocol, l.max)
		}
		line, err = l.r.ReadSlice('\n')
		l.long = append(l.long, line...)
	}
	return l.long, err
}
