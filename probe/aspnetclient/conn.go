package aspnetclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Conn is one classic hub connection. Its methods are safe for concurrent
// use. One goroutine reads (and reconnects); writes happen on the
// caller's goroutine, one at a time; pings come from a timer.
type Conn struct {
	s        *session
	o        *Options
	hub      string // lowercased, as the JavaScript client sends it
	handlers map[string]Handler

	tmu sync.Mutex
	t   transport // replaced by a reconnect

	// cursor and groupsToken are the last C and G the server sent, what a
	// reconnect and every long poll hand back; only the read goroutine
	// writes them, under tmu.
	cursor      string
	groupsToken string
	// longPollDelay is how long long polling waits before its next poll:
	// the L of the last answer; the read goroutine's own.
	longPollDelay time.Duration

	nextID    atomic.Uint64
	state     clientconn.State
	keepAlive clientconn.KeepAlive
	live      clientconn.Liveness
	posts     sendPosts

	// The read goroutine's decode space, reused frame after frame.
	frame  aspnet.Frame
	inv    aspnet.Invocation
	result aspnet.HubResult

	mu      sync.Mutex
	drained bool
	calls   map[string]chan callResult
}

type callResult struct {
	result json.RawMessage
	err    error
}

// Dial negotiates, connects the transport, waits for the server's init
// message and sends start. ctx bounds the whole attempt, not the
// connection's life. Failures are *clientconn.ConnectError, except for
// invalid Options.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	o, candidates, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	endpoint, err := clientconn.ParseEndpoint(o.URL)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	if err := clientconn.ReservedHostError(endpoint, clientconn.PhaseNegotiate); err != nil {
		return nil, err
	}
	clock := clientconn.StartClock()
	c, err := dial(clock.Traced(ctx), &o, candidates, endpoint, clock)
	if err != nil {
		return nil, clock.Failed(err)
	}
	o.Observer.Connected(clock.Stop())
	c.run()
	return c, nil
}

// dial connects phase by phase: negotiate (and redirects), upgrade (the
// connect request up to the init message), handshake (start).
func dial(ctx context.Context, o *Options, candidates []string, endpoint *url.URL, clock *clientconn.PhaseClock) (*Conn, error) {
	s, err := negotiate(ctx, o, endpoint, clock)
	if err != nil {
		return nil, err
	}
	name, err := chooseTransport(s, candidates)
	if err != nil {
		return nil, err
	}
	c := newConn(s, o)
	t, err := c.connect(clock.Enter(ctx, clientconn.PhaseUpgrade), name)
	if err != nil {
		return nil, err
	}
	c.t = t
	if err := c.start(clock.Enter(ctx, clientconn.PhaseHandshake)); err != nil {
		t.close()
		return nil, err
	}
	return c, nil
}

func newConn(s *session, o *Options) *Conn {
	c := &Conn{s: s, o: o, hub: strings.ToLower(o.Hub), handlers: handlersByName(o.Handlers),
		calls: make(map[string]chan callResult)}
	c.state.Init()
	c.posts.init()
	c.live.Start(o.Observer)
	return c
}

// run starts the read goroutine and the keep-alive timer, which also
// measures the transport's round trip.
func (c *Conn) run() {
	c.keepAlive.MeasureEvery(c.o.RoundTripInterval)
	c.keepAlive.Start(c.o.KeepAliveInterval, (*keepAliveHooks)(c))
	go c.readLoop()
}

// Transport is the transport in use, one of the Transport* constants.
func (c *Conn) Transport() string { return c.transport().name() }

// ConnectionID is the id negotiate assigned, the one the hub addresses
// this connection by.
func (c *Conn) ConnectionID() string { return c.s.connectionID }

// Done is closed once the connection has ended and its transport is closed.
func (c *Conn) Done() <-chan struct{} { return c.state.Done() }

// Err is nil while the connection is open and after a clean Close. It is
// a *clientconn.CloseError when the server disconnected the connection
// (D) or sent an error (E), an error wrapping clientconn.ErrServerTimeout
// when the server fell silent, wrapping ErrProtocol for bytes that break
// the protocol, a *ReconnectError when the transport dropped and could not
// be re-established, or the I/O error that ended it.
func (c *Conn) Err() error { return c.state.Err() }

// EndedAt is when the connection started to end; zero while it is open.
func (c *Conn) EndedAt() time.Time { return c.state.EndedAt() }

func (c *Conn) transport() transport {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	return c.t
}

// Close aborts the connection as the JavaScript client's stop does: it
// tells the server with the abort request, closes the transport, and
// waits briefly for the read goroutine. It returns nil, or the error that
// had already ended the connection.
func (c *Conn) Close(ctx context.Context) error {
	return c.state.CloseInOrder(ctx, clientconn.CloseSteps{
		Last:           c.abort,
		Shutdown:       func(deadline time.Time) { c.transport().shutdown(deadline) },
		CloseTransport: func() { c.transport().close() },
	})
}

// fail ends the connection with err and unblocks the read goroutine.
func (c *Conn) fail(err error) {
	c.state.End(err)
	c.transport().close()
}

// handlersByName keys each handler by its name lowercased, and then by
// its name as given, which the hub's calls usually spell it as: found
// without lowercasing a name per message.
func handlersByName(given map[string]Handler) map[string]Handler {
	byName := make(map[string]Handler, 2*len(given))
	for name, h := range given {
		byName[strings.ToLower(name)] = h
	}
	for name, h := range given {
		byName[name] = h
	}
	return byName
}

func (c *Conn) handler(method string) Handler {
	if h, ok := c.handlers[method]; ok {
		return h
	}
	return c.handlers[strings.ToLower(method)]
}
