package signalrclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

const (
	// parseChunk is how many bytes of one large frame are read before the
	// buffer is parsed, so a frame of many records is consumed as it comes.
	parseChunk = 64 << 10
	// minReadSpace is the smallest free space handed to one Read.
	minReadSpace = 1024
)

// Conn is one hub connection over WebSockets, server-sent events or long
// polling. Its methods are safe for concurrent use. One goroutine reads;
// writes happen on the caller's goroutine, one at a time; keep-alive pings
// come from a timer.
type Conn struct {
	t              transport
	proto          signalr.HubProtocol
	obs            clientconn.Observer
	frameType      int
	connectionID   string
	handlers       []namedHandler
	serverTimeout  time.Duration
	writeTimeout   time.Duration
	maxMessageSize int64

	nextID atomic.Uint64

	state      clientconn.State // the end, and the write turn
	keepAlive  clientconn.KeepAlive
	live       clientconn.Liveness // CheckAlive's pongs and read stamps
	guard      clientconn.WriteGuard
	dispatchFn func(*signalr.Message) error

	// rbuf holds unparsed bytes; only the read goroutine (or Dial, before
	// it starts) touches it. rbufp is its pool handle, nil when idle.
	rbuf  []byte
	rbufp *[]byte

	// calls and streams are pending invocations and streams by id, made
	// with the first one: most connections never invoke.
	mu      sync.Mutex
	drained bool // calls and streams were failed; no new ones accepted
	calls   map[string]*call
	streams map[string]*Stream
}

// namedHandler is one of Options.Handlers. A connection keeps the few a
// hub has in a slice: 128 bytes for five, where a map takes 256.
type namedHandler struct {
	target  string
	handler Handler
}

type call struct{ done chan callResult }

type callResult struct {
	result json.RawMessage
	err    error
}

var (
	pingMessage  = signalr.Message{Type: signalr.PingType}
	closeMessage = signalr.Message{Type: signalr.CloseType}
)

// Dial negotiates (unless SkipNegotiation), opens the transport, and
// completes the hub handshake. ctx bounds the whole attempt; it does not
// bound the connection's life. Failures are *clientconn.ConnectError, except for
// invalid Options.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	endpoint, err := parseEndpoint(o.URL)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	if err := reservedHostError(endpoint, o.SkipNegotiation); err != nil {
		return nil, err
	}
	clock := clientconn.StartClock()
	c, err := dial(clock.Traced(ctx), &o, endpoint, clock)
	if err != nil {
		return nil, clock.Failed(err)
	}
	o.Observer.Connected(clock.Stop())
	c.run(&o)
	return c, nil
}

// dial connects phase by phase, each entered on clock: negotiate (and
// redirect), upgrade, handshake.
func dial(ctx context.Context, o *Options, endpoint *url.URL, clock *clientconn.PhaseClock) (*Conn, error) {
	target, err := resolveTarget(ctx, o, endpoint, clock)
	if err != nil {
		return nil, err
	}
	t, err := openTransport(clock.Enter(ctx, clientconn.PhaseUpgrade), o, target)
	if err != nil {
		return nil, err
	}
	c := newConn(t, o, target.connectionID)
	if err := c.handshake(clock.Enter(ctx, clientconn.PhaseHandshake), o.HandshakeTimeout); err != nil {
		t.close()
		c.releaseReadBuf(true)
		return nil, err
	}
	return c, nil
}

func newConn(t transport, o *Options, connectionID string) *Conn {
	c := &Conn{
		t:              t,
		proto:          o.Protocol,
		obs:            o.Observer,
		frameType:      frameTypeFor(o.Protocol.TransferFormat()),
		connectionID:   connectionID,
		handlers:       make([]namedHandler, 0, len(o.Handlers)),
		serverTimeout:  o.ServerTimeout,
		writeTimeout:   o.WriteTimeout,
		maxMessageSize: o.MaxMessageSize,
	}
	c.state.Init()
	c.live.Start(o.Observer)
	for target, h := range o.Handlers {
		c.handlers = append(c.handlers, namedHandler{target, h})
	}
	// Bound once here: a method value passed on every call would allocate.
	c.guard.Init(c.abortWrite)
	c.dispatchFn = c.dispatch
	return c
}

// run starts the read goroutine and the keep-alive timer, which also
// measures the transport's round trip.
func (c *Conn) run(o *Options) {
	if ws, ok := c.t.(*wsTransport); ok {
		ws.ws.SetPongHandler(c.live.OnPong)
	}
	c.keepAlive.MeasureEvery(o.RoundTripInterval)
	c.keepAlive.Start(o.KeepAliveInterval, (*keepAliveHooks)(c))
	go c.readLoop()
}

// Transport is the transport in use: TransportWebSockets, TransportSSE
// or TransportLongPolling.
func (c *Conn) Transport() string { return c.t.name() }

// ConnectionID is the id negotiate assigned, the one other parties use to
// address this connection. It is empty when negotiation was skipped.
func (c *Conn) ConnectionID() string { return c.connectionID }

// Done is closed once the connection has ended and its socket is closed.
func (c *Conn) Done() <-chan struct{} { return c.state.Done() }

// Err is nil while the connection is open and after a clean Close. It is a
// *clientconn.CloseError if the server sent a Close message, an error wrapping
// clientconn.ErrServerTimeout or ErrProtocol for those failures, a *TransportError
// when a server-sent events or long-polling request failed, or the I/O
// error that ended the connection.
func (c *Conn) Err() error { return c.state.Err() }

// EndedAt is when the connection started to end; zero while it is open.
func (c *Conn) EndedAt() time.Time { return c.state.EndedAt() }

// Close sends a Close message and ends the transport in order (a
// WebSocket close frame 1000; a DELETE for long polling; server-sent events
// just drop the stream), waits briefly for the server to close, then
// closes the transport. It returns nil, or the error that had already
// ended the connection.
func (c *Conn) Close(ctx context.Context) error {
	return c.state.CloseInOrder(ctx, clientconn.CloseSteps{
		Last:           c.writeCloseMessage,
		Shutdown:       c.t.shutdown,
		CloseTransport: c.t.close,
	})
}

func (c *Conn) writeCloseMessage(ctx context.Context) { _ = c.writeMessage(ctx, &closeMessage) }

// fail ends the connection with err and unblocks the read goroutine.
func (c *Conn) fail(err error) {
	c.state.End(err)
	c.t.close()
}

func (c *Conn) newID() string { return formatID(c.nextID.Add(1)) }

// handler finds the handler for target, case-insensitively like the
// SignalR clients; the exact-case match comes first because it is cheap.
func (c *Conn) handler(target string) Handler {
	for _, n := range c.handlers {
		if n.target == target {
			return n.handler
		}
	}
	for _, n := range c.handlers {
		if strings.EqualFold(n.target, target) {
			return n.handler
		}
	}
	return nil
}

// register adds a pending invocation or stream, unless the connection ended.
func (c *Conn) register(id string, cl *call, s *Stream) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drained || c.state.Ended() {
		return c.state.ClosedErr()
	}
	if cl != nil {
		c.calls = withEntry(c.calls, id, cl)
	} else {
		c.streams = withEntry(c.streams, id, s)
	}
	return nil
}

// withEntry sets m[id] to v, making m first if there is none yet.
func withEntry[V any](m map[string]V, id string, v V) map[string]V {
	if m == nil {
		m = make(map[string]V)
	}
	m[id] = v
	return m
}

// unregister forgets id and reports whether it was still pending.
func (c *Conn) unregister(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, isCall := c.calls[id]
	_, isStream := c.streams[id]
	delete(c.calls, id)
	delete(c.streams, id)
	return isCall || isStream
}

func formatID(n uint64) string { return strconv.FormatUint(n, 10) }
