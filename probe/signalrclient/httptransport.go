package signalrclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Endpoints that HTTP transports report to clientconn.Observer.HTTPResponse.
const (
	EndpointSend   = "send"   // HTTP POST of queued messages
	EndpointPoll   = "poll"   // long-polling GET
	EndpointSSE    = "sse"    // the event stream GET
	EndpointDelete = "delete" // long-polling DELETE on close
)

// TransportError ends a connection whose server-sent events or long
// polling request failed once connected: an unexpected HTTP status, or the
// server ending the stream without a Close message.
type TransportError = clientconn.TransportError

// httpTransport is what the server-sent events and long-polling transports
// share: the connection URL and headers, the POST send half, the read
// deadline, and one context whose cancellation stops every request.
type httpTransport struct {
	kind      string // TransportSSE or TransportLongPolling
	ctx       context.Context
	cancel    context.CancelFunc
	client    *http.Client // sends and DELETE
	long      *http.Client // the stream and polls: no overall timeout
	url       string       // {endpoint}?{query}&id={token}
	bare      string       // {endpoint}?{query}: what roundTrip asks for
	header    http.Header  // caller's headers and bearer token; read-only
	frameType int
	obs       clientconn.Observer
	deadline  clientconn.ReadDeadline
	send      postSender

	failure atomic.Pointer[error] // why the transport stopped, first one wins
}

func newHTTPTransport(o *Options, target *transportTarget, kind string) *httpTransport {
	client := o.TransportHTTPClient()
	long := *client
	long.Timeout = 0
	ctx, cancel := context.WithCancel(context.Background())
	t := &httpTransport{
		kind:      kind,
		ctx:       ctx,
		cancel:    cancel,
		client:    client,
		long:      &long,
		url:       withConnectionToken(target.endpoint, target.token).String(),
		bare:      target.endpoint.String(),
		header:    requestHeaders(o.Headers, target.accessToken),
		frameType: frameTypeFor(o.Protocol.TransferFormat()),
		obs:       o.Observer,
	}
	t.deadline.Expire = func() {
		t.fail(fmt.Errorf("probe: %s: read deadline passed: %w", kind, os.ErrDeadlineExceeded))
	}
	t.send.init(t, o)
	return t
}

func (t *httpTransport) name() string { return t.kind }

func (t *httpTransport) setReadDeadline(d time.Time) error {
	t.deadline.Set(d)
	return nil
}

func (t *httpTransport) writeHandshake(traced context.Context, b []byte, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(clientconn.TraceInto(t.ctx, traced), deadline)
	defer cancel()
	// The buffer goes back to a pool when this returns; the HTTP client
	// may still hold the body after an error.
	return t.send.post(ctx, bytes.Clone(b))
}

func (t *httpTransport) writeFrame(b []byte) error { return t.send.enqueue(b) }

// close cancels every request, which unblocks reads of their bodies; the
// read goroutine closes those.
func (t *httpTransport) close() {
	t.cancel()
	t.deadline.Stop()
}

// flushUntil waits, until deadline at most, for queued sends to be
// accepted: a Close message should reach the server before the transport
// goes away.
func (t *httpTransport) flushUntil(deadline time.Time) {
	ctx, cancel := context.WithDeadline(t.ctx, deadline)
	defer cancel()
	_ = t.send.flush(ctx.Done())
}

// fail records err as the reason the transport stopped, then closes it,
// which ends the read goroutine with that reason.
func (t *httpTransport) fail(err error) {
	t.failure.CompareAndSwap(nil, &err)
	t.close()
}

// readErr explains why a read of the stream or a poll failed: the read
// deadline passing or a failed send, either of which closed the transport,
// or err itself.
func (t *httpTransport) readErr(err error) error {
	if f := t.failure.Load(); f != nil {
		return *f
	}
	return redact.URLError(err)
}

// newRequest builds a request to the connection URL on ctx.
func (t *httpTransport) newRequest(ctx context.Context, method, rawURL string, body io.Reader, header http.Header) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		return nil, redact.URLError(err)
	}
	req.Header = header
	return req, nil
}

// requestError describes an unexpected status of an open connection's
// request; 400, 404 and 410 mean the server no longer has the connection.
func (t *httpTransport) requestError(request string, res *http.Response) *TransportError {
	body := clientconn.ErrorBody(res)
	var err error
	switch res.StatusCode {
	case http.StatusNotFound, http.StatusGone:
		err = errors.New("the server no longer has this connection")
	case http.StatusBadRequest:
		err = errors.New("the server refused the request (missing or unknown connection id)")
	case http.StatusConflict:
		err = errors.New("the server saw two requests of this kind at once; the connection allows one")
	default:
		err = errors.New("unexpected HTTP status")
	}
	return &TransportError{Transport: t.kind, Request: request, StatusCode: res.StatusCode, Body: body, Err: err}
}

// sendDelete asks the server to end the connection (long polling's
// graceful close) and reports the answer.
func (t *httpTransport) sendDelete(deadline time.Time) {
	// Not on t.ctx: the 204 DELETE brings to the poll may close the
	// transport before DELETE's own answer is in.
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	req, err := t.newRequest(ctx, http.MethodDelete, t.url, nil, t.header)
	if err != nil {
		return
	}
	res, err := t.client.Do(req)
	if err != nil {
		return
	}
	t.obs.HTTPResponse(EndpointDelete, res.StatusCode)
	discardBody(res)
}

// roundTripTimeout bounds one round-trip request: a server that takes
// longer to refuse it measures nothing of the network.
const roundTripTimeout = 5 * time.Second

var errNoRoundTrip = errors.New("probe: no round trip: the request was not written, or not answered")

// roundTrip measures the network's round trip on the transport's own
// connection pool: a GET of the connection URL without its id, which the
// connection dispatcher refuses at once ("Connection ID required") before
// any hub code runs, timed from the request written to the answer's first
// byte, so neither a new connection's dial nor the headers' writing is in
// it. It reports no HTTP status: the refusal is by design.
func (t *httpTransport) roundTrip() (time.Duration, error) {
	var wrote, answered atomic.Int64 // nanoseconds since began; set on the HTTP client's goroutines
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.ctx, roundTripTimeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote.Store(int64(time.Since(began))) },
		GotFirstResponseByte: func() { answered.Store(int64(time.Since(began))) },
	})
	req, err := t.newRequest(ctx, http.MethodGet, t.bare, nil, t.header)
	if err != nil {
		return 0, err
	}
	res, err := t.client.Do(req)
	if err != nil {
		return 0, err
	}
	discardBody(res)
	w, a := wrote.Load(), answered.Load()
	if w == 0 || a < w {
		return 0, errNoRoundTrip
	}
	return time.Duration(a - w), nil
}

// discardBody drains a little of a response body and closes it.
var discardBody = clientconn.DiscardBody

// openStreamRequest sends req (a stream or first poll, made on the
// transport's context) with the dial's ctx and HandshakeTimeout bounding
// the wait for its response headers. Failures are *clientconn.ConnectError.
func (t *httpTransport) openStreamRequest(ctx context.Context, o *Options, req *http.Request, endpoint string) (*http.Response, error) {
	dctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
	defer cancel()
	stop := context.AfterFunc(dctx, t.close)
	res, err := t.long.Do(req)
	if !stop() {
		if res != nil {
			_ = res.Body.Close()
		}
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, dctx.Err())
	}
	if err != nil {
		t.close()
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, redact.URLError(err))
	}
	t.obs.HTTPResponse(endpoint, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		t.close()
		return nil, statusError(clientconn.PhaseTransport, res)
	}
	return res, nil
}

// withConnectionToken adds the connection token to endpoint as id=.
func withConnectionToken(endpoint *url.URL, connectionToken string) *url.URL {
	u := *endpoint
	if connectionToken != "" {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += "id=" + url.QueryEscape(connectionToken)
	}
	return &u
}

func (t *httpTransport) sender() *postSender { return &t.send }
