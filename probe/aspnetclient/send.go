package aspnetclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// EndpointSend is the send POST's endpoint as the HTTP transports report
// it to clientconn.Observer.HTTPResponse; the others are the request's
// path (start, ping, abort, poll, reconnect) or the transport's name.
const EndpointSend = "send"

// MaxSendsInFlight bounds the send POSTs one connection of the HTTP
// transports has open at once. The JavaScript client fires each send as
// soon as it is made, so a browser holds up to its six connections per
// host, one of them taken by the stream or the poll: five for sends.
const MaxSendsInFlight = 5

// errNoSendSlot is a send that found MaxSendsInFlight POSTs still open
// until its context ended; nothing was written, the connection goes on.
var errNoSendSlot = errors.New("probe: send not started: every send POST of the connection is still waiting for its answer")

// poster is the send half of the HTTP transports: each message one POST
// of the form field data, as the JavaScript client sends it, started
// without waiting for the ones before it, so a slow answer does not hold
// up the sender's schedule. The server answers an invocation in the
// POST's response: its hub result. A POST that fails ends the connection.
type poster struct{ c *Conn }

// write takes one of the connection's send slots (waiting while all are
// busy, within ctx) and starts the POST of b.
func (p poster) write(ctx context.Context, b []byte) error {
	posts := &p.c.posts
	select {
	case posts.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", errNoSendSlot, ctx.Err())
	case <-p.c.state.Closing():
		return p.c.state.ClosedErr()
	}
	if !posts.add() {
		<-posts.slots
		return p.c.state.ClosedErr()
	}
	go p.post(string(b)) // a copy: the caller reuses b
	return nil
}

// post sends one POST on the connection's send context and gives its slot
// back; a failure ends the connection, unless the connection was
// already closing.
func (p poster) post(data string) {
	c := p.c
	defer c.posts.done()
	ctx := c.posts.ctx
	if c.o.WriteTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.WriteTimeout)
		defer cancel()
	}
	if err := p.send(ctx, data); err != nil && c.posts.ctx.Err() == nil {
		c.endOnWriteError(err)
	}
}

func (p poster) send(ctx context.Context, data string) error {
	c := p.c
	res, err := c.request(ctx, http.MethodPost, c.s.requestURL(EndpointSend, c.tname()), url.Values{"data": {data}})
	if err != nil {
		return &TransportError{Request: EndpointSend, Err: err}
	}
	defer res.Body.Close()
	c.o.Observer.HTTPResponse(EndpointSend, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return &TransportError{Request: EndpointSend, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
			Err: clientconn.Refusal("unexpected HTTP status", res.StatusCode, "the server no longer has this connection")}
	}
	c.o.Observer.BytesSent(len(data))
	return p.settleAnswer(res.Body)
}

// settleAnswer reads the send's answer, a hub result when it is not
// empty, and hands it to the Invoke waiting for it.
func (p poster) settleAnswer(body io.Reader) error {
	answer, err := readBounded(body, nil, p.c.o.MaxMessageSize)
	if err != nil {
		return &TransportError{Request: EndpointSend, Err: err}
	}
	if len(bytes.TrimSpace(answer)) == 0 {
		return nil
	}
	var f aspnet.Frame
	if err := aspnet.DecodeFrame(answer, &f); err != nil {
		return err
	}
	if f.Kind == aspnet.ResultFrame {
		p.c.settle(&f.Result)
	}
	return nil
}

// sendPosts are a connection's send POSTs in flight: at most
// MaxSendsInFlight, on a context that outlives each caller's and ends
// with the connection.
type sendPosts struct {
	slots   chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

func (s *sendPosts) init() {
	s.slots = make(chan struct{}, MaxSendsInFlight)
	s.ctx, s.cancel = context.WithCancel(context.Background())
}

// add counts one more POST in flight, unless stop has run.
func (s *sendPosts) add() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *sendPosts) done() {
	<-s.slots
	s.wg.Done()
}

// stop cancels the POSTs still in flight and waits for them to return.
func (s *sendPosts) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}
