package aspnetclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// transport carries persistent responses from the server and the
// client's sends to it. next and setReadDeadline are called from one
// goroutine at a time (Dial, then the read goroutine); write while
// holding the connection's write turn; close from anywhere.
type transport interface {
	// next returns the next message from the server: one persistent
	// response (or bare hub result), valid until the next call.
	next() ([]byte, error)
	// setReadDeadline bounds next; passing it fails next with an error
	// clientconn.IsTimeout recognises.
	setReadDeadline(t time.Time)
	// write sends one message: a WebSocket message, or a send POST it
	// starts and does not wait for. b is the caller's again once write
	// returns.
	write(ctx context.Context, b []byte) error
	// shutdown starts an orderly close by deadline (a close frame).
	shutdown(deadline time.Time)
	// close releases everything and unblocks any read or write; idempotent.
	close()
	name() string
}

// chooseTransport picks the first candidate the session can use: the
// server may rule WebSockets out (TryWebSockets), and Forever Frame
// cannot carry the bearer token a redirect to Azure SignalR Service hands
// out, as the JavaScript client knows.
func chooseTransport(s *session, candidates []string) (string, error) {
	reasons := make([]string, 0, len(candidates))
	for _, name := range candidates {
		switch {
		case name == TransportWebSockets && !s.tryWebSockets:
			reasons = append(reasons, "server does not offer webSockets (TryWebSockets false)")
		case name == TransportForeverFrame && s.accessToken != "":
			reasons = append(reasons, "foreverFrame cannot send the bearer token the connection needs")
		default:
			return name, nil
		}
	}
	return "", negotiateError(errors.New(strings.Join(reasons, "; ")))
}

// connect opens transport name with the connect request and waits for the
// server's init message, within HandshakeTimeout.
func (c *Conn) connect(ctx context.Context, name string) (transport, error) {
	hctx, cancel := context.WithTimeout(ctx, c.o.HandshakeTimeout)
	defer cancel()
	t, err := c.open(hctx, name, false)
	if err != nil {
		return nil, err
	}
	if err := c.awaitInit(hctx, t); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// open sends the connect request, or the reconnect request with the
// cursor and groups token, over transport name.
func (c *Conn) open(ctx context.Context, name string, reconnect bool) (transport, error) {
	switch name {
	case TransportWebSockets:
		return dialWebSocket(ctx, c, reconnect)
	case TransportLongPolling:
		return dialLongPolling(ctx, c, reconnect)
	}
	return dialStream(ctx, c, name, reconnect)
}

// awaitInit reads until the init message (S) of a new connection; the
// messages that precede or come with it are dispatched.
func (c *Conn) awaitInit(ctx context.Context, t transport) error {
	deadline, _ := ctx.Deadline()
	t.setReadDeadline(deadline)
	for {
		b, err := t.next()
		if err != nil {
			if clientconn.IsTimeout(err) || ctx.Err() != nil {
				return clientconn.NewConnectError(clientconn.PhaseTransport, fmt.Errorf("no init message: %w", context.DeadlineExceeded))
			}
			return clientconn.NewConnectError(clientconn.PhaseTransport, err)
		}
		init, err := c.handleFrame(b)
		if err != nil {
			return clientconn.NewConnectError(clientconn.PhaseTransport, err)
		}
		if init {
			return nil
		}
	}
}

// start sends the start request, which the server answers
// {"Response":"started"} once the connection is set up.
func (c *Conn) start(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, c.o.HandshakeTimeout)
	defer cancel()
	res, err := c.request(hctx, http.MethodGet, c.s.requestURL("start", c.tname()), nil)
	if err != nil {
		return clientconn.NewConnectError(clientconn.PhaseHandshake, err)
	}
	defer res.Body.Close()
	c.o.Observer.HTTPResponse("start", res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return statusError(clientconn.PhaseHandshake, res)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, clientconn.MaxErrorBody))
	if err == nil {
		err = aspnet.CheckStartResponse(body)
	}
	if err != nil {
		return clientconn.NewConnectError(clientconn.PhaseHandshake, redact.URLError(err))
	}
	return nil
}

// tname is the transport's name during Dial too, before c.t is set.
func (c *Conn) tname() string {
	if t := c.transport(); t != nil {
		return t.name()
	}
	return c.o.Transport
}

// request sends one HTTP request of the connection with its headers and
// bearer token; form, when not nil, is the body, form-encoded as the
// JavaScript client posts it.
func (c *Conn) request(ctx context.Context, method string, u *url.URL, form url.Values) (*http.Response, error) {
	var body io.Reader = http.NoBody
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, redact.URLError(err)
	}
	req.Header = clientconn.RequestHeaders(c.o.Headers, c.s.accessToken)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	}
	res, err := c.o.TransportHTTPClient().Do(req)
	if err != nil {
		return nil, redact.URLError(err)
	}
	return res, nil
}

// abort tells the server the client is going, as the JavaScript client's
// stop does; the answer does not matter.
func (c *Conn) abort(ctx context.Context) {
	res, err := c.request(ctx, http.MethodPost, c.s.requestURL("abort", c.tname()), url.Values{})
	if err != nil {
		return
	}
	c.o.Observer.HTTPResponse("abort", res.StatusCode)
	clientconn.DiscardBody(res)
}

// tid is the JavaScript client's random tid query value, 0 to 10.
func tid() string { return "tid=" + strconv.Itoa(int(time.Now().UnixNano()%11)) }

// cursorQuery is what a reconnect (and, for long polling, every poll's
// URL in old clients) sends back: the groups token and the cursor.
func (c *Conn) cursorQuery() []string {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	var q []string
	if c.groupsToken != "" {
		q = append(q, "groupsToken="+url.QueryEscape(c.groupsToken))
	}
	if c.cursor != "" {
		q = append(q, "messageId="+url.QueryEscape(c.cursor))
	}
	return q
}
