// Package webpubsubclient is hubprobe's Azure Web PubSub client: one WebSocket
// connection speaking json.webpubsub.azure.v1 or its reliable variant
// json.reliable.webpubsub.azure.v1, with the frames of package webpubsub.
//
// It joins and leaves groups, sends to groups and sends events with or
// without acks, delivers group and server messages to handlers,
// acknowledges sequence ids on the reliable protocol and keeps the
// connection alive with pings. It does not reconnect or recover a
// dropped connection: a probe reports the drop instead.
//
// Its failures are the ones every client shares (package clientconn):
// *ConnectError (with its phases) for a failed Dial, *CloseError when the
// service said why it ended the connection, ErrClosed and
// ErrServerTimeout. The scenarios and ClassifyThrottle then read every
// client's failures alike, and one Observer counts every client's bytes.
// Only what SignalR has no word for is new here: ErrProtocol and the
// failed ack, *AckError.
package webpubsubclient

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Conn is one Web PubSub client connection. Its methods are safe for
// concurrent use. One goroutine reads and runs the handlers; writes happen
// on the caller's goroutine, one at a time; pings and sequence acks come
// from timers.
type Conn struct {
	ws           *websocket.Conn
	obs          clientconn.Observer
	protocol     string
	reliable     bool
	connectionID string
	userID       string
	onGroup      func(Message)
	onServer     func(Message)

	serverTimeout  time.Duration
	writeTimeout   time.Duration
	maxMessageSize int64

	// dec and frame belong to the reader (Dial's handshake, then the read
	// goroutine): fields rather than locals, so decoding allocates nothing.
	dec   webpubsub.Decoder
	frame webpubsub.Frame

	lastAckID atomic.Uint64
	seq       sequence

	state     clientconn.State // the end, and the write turn
	keepAlive clientconn.KeepAlive
	live      clientconn.Liveness // CheckAlive's pongs and read stamps
	guard     clientconn.WriteGuard

	mu   sync.Mutex
	acks map[uint64]pendingAck // nil once the connection ended
}

// Dial opens the WebSocket with the chosen subprotocol and waits for the
// service's connected message. ctx bounds the whole attempt, not the
// connection's life. Failures are *clientconn.ConnectError (PhaseTransport for
// the upgrade, PhaseHandshake for the wait, PhaseTimeout when time ran
// out), except for invalid Options.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	target, err := dialURL(o.URL, o.AccessToken)
	if err != nil {
		return nil, err
	}
	clock := clientconn.StartClock()
	c, err := dial(clock.Traced(ctx), &o, target, clock)
	if err != nil {
		return nil, clock.Failed(err)
	}
	o.Observer.Connected(clock.Stop())
	c.run(&o)
	return c, nil
}

// dial connects phase by phase, each entered on clock: the upgrade (with
// its dns, tcp and tls), then the handshake, the wait for the connected
// message.
func dial(ctx context.Context, o *Options, target string, clock *clientconn.PhaseClock) (*Conn, error) {
	ws, err := dialWebSocket(clock.Enter(ctx, clientconn.PhaseUpgrade), o, target)
	if err != nil {
		return nil, err
	}
	clock.Enter(ctx, clientconn.PhaseHandshake)
	c := newConn(ws, o)
	if err := c.handshake(ctx, o.HandshakeTimeout); err != nil {
		_ = ws.Close()
		return nil, err
	}
	return c, nil
}

func newConn(ws *websocket.Conn, o *Options) *Conn {
	c := &Conn{
		ws:             ws,
		obs:            o.Observer,
		protocol:       o.Protocol,
		reliable:       webpubsub.IsReliable(o.Protocol),
		onGroup:        o.OnGroupMessage,
		onServer:       o.OnServerMessage,
		serverTimeout:  o.ServerTimeout,
		writeTimeout:   o.WriteTimeout,
		maxMessageSize: o.MaxMessageSize,
		acks:           make(map[uint64]pendingAck),
	}
	c.state.Init()
	c.live.Start(o.Observer)
	// Bound once here: a method value passed on every write would allocate.
	c.guard.Init(c.abortWrite)
	return c
}

// run starts the read goroutine and the timers; the keep-alive's also
// measures the round trip.
func (c *Conn) run(o *Options) {
	c.ws.SetPingHandler(c.onPing)
	c.ws.SetPongHandler(c.live.OnPong)
	c.keepAlive.MeasureEvery(o.RoundTripInterval)
	c.keepAlive.Start(o.KeepAliveInterval, (*keepAliveHooks)(c))
	c.mu.Lock()
	if c.reliable {
		c.seq.start(o.SequenceAckInterval, c.sendSequenceAck)
	}
	c.mu.Unlock()
	go c.readLoop()
}

// ConnectionID is the id the service assigned in its connected message.
func (c *Conn) ConnectionID() string { return c.connectionID }

// UserID is the user id the connected message named (the token's sub),
// empty for an anonymous connection.
func (c *Conn) UserID() string { return c.userID }

// Protocol is the subprotocol in use.
func (c *Conn) Protocol() string { return c.protocol }

// Done is closed once the connection has ended and its socket is closed.
func (c *Conn) Done() <-chan struct{} { return c.state.Done() }

// Err is nil while the connection is open and after a clean Close. It is
// a *clientconn.CloseError when the service sent a disconnected message (or a
// WebSocket close with a reason), an error wrapping ErrProtocol or
// clientconn.ErrServerTimeout for those failures, or the I/O error that ended
// the connection.
func (c *Conn) Err() error { return c.state.Err() }

// EndedAt is when the connection started to end; zero while it is open.
func (c *Conn) EndedAt() time.Time { return c.state.EndedAt() }

// CheckAlive sends a WebSocket ping and waits up to wait for its pong
// (clientconn.Liveness): a service that neither answers nor sends a byte
// stopped reading, the connection is half-open and ends with an error
// wrapping clientconn.ErrServerTimeout, which CheckAlive returns. Bytes
// still arriving when wait is up mean alive. If ctx ends first, CheckAlive
// returns ctx.Err() and leaves the connection alone. One check at a time.
func (c *Conn) CheckAlive(ctx context.Context, wait time.Duration) error {
	return c.live.Check(ctx, wait, &c.state, c.writePing, c.fail)
}

func (c *Conn) writePing(payload []byte, deadline time.Time) error {
	return c.ws.WriteControl(websocket.PingMessage, payload, deadline)
}

// measureRoundTrip pings the service without waiting, from Start and then
// on the keep-alive's timer (clientconn.KeepAliveConn); the read
// goroutine times the pong (clientconn.Liveness), which the service's
// WebSocket layer answers without its hub logic.
func (c *Conn) measureRoundTrip() { c.live.PingRoundTrip(c.writePing, clientconn.InternalWriteTimeout) }

// Close ends the connection in order: a WebSocket close frame 1000, a
// short wait for the service's answer, then the socket closes. Requests
// still waiting for an ack fail with clientconn.ErrClosed. It returns nil, or
// the error that had already ended the connection.
func (c *Conn) Close(ctx context.Context) error {
	return c.state.CloseInOrder(ctx, clientconn.CloseSteps{Shutdown: c.shutdown, CloseTransport: c.closeSocket})
}

// shutdown sends the close frame (1000) that starts the closing handshake.
func (c *Conn) shutdown(deadline time.Time) {
	clientconn.SendClose(c.ws, websocket.CloseNormalClosure, deadline)
}

func (c *Conn) closeSocket() { _ = c.ws.Close() }

// fail ends the connection with err and unblocks the read goroutine.
func (c *Conn) fail(err error) {
	c.state.End(err)
	_ = c.ws.Close()
}

// onPing answers a WebSocket ping, as gorilla's default handler does, and
// counts it as the service being alive.
func (c *Conn) onPing(data string) error {
	_ = c.ws.SetReadDeadline(time.Now().Add(c.serverTimeout))
	err := c.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(clientconn.GoodbyeWait))
	var ne net.Error
	if errors.Is(err, websocket.ErrCloseSent) || errors.As(err, &ne) {
		return nil // the reader learns soon enough that the socket is gone
	}
	return err
}

// keepAliveHooks is the connection as its keep-alive's timer calls it: a
// conversion of the *Conn, where method values would be two objects per
// connection.
type keepAliveHooks Conn

func (h *keepAliveHooks) KeepAlivePing()    { (*Conn)(h).sendKeepAlivePing() }
func (h *keepAliveHooks) MeasureRoundTrip() { (*Conn)(h).measureRoundTrip() }
