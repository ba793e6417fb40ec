package wpshub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/webpubsub"
	"github.com/rs/zerolog"
)

const (
	// maxMessageSize is the largest frame a Web PubSub client may send,
	// the service's 1 MB message limit.
	maxMessageSize = 1 << 20
	// writeTimeout bounds one write to a client that stopped reading.
	writeTimeout = 10 * time.Second
	// eventsInFlight bounds the event handler calls one connection has
	// running; past it the connection's next frame waits.
	eventsInFlight = 16
)

// closeCause is why the hub ends a connection: the disconnected system
// message's text (the close frame's reason for a simple client) and the
// WebSocket close code. 1008 tells a reliable client not to try recovering
// the connection, which this hub never keeps.
type closeCause struct {
	code   int
	reason string
	// quiet leaves the disconnected message out: the close frame alone
	// says why.
	quiet bool
}

var (
	closeShutdown = closeCause{code: websocket.CloseGoingAway, reason: core.ShuttingDownText}
	closeTimeout  = closeCause{code: websocket.ClosePolicyViolation, reason: "The client sent nothing within the client timeout."}
	closeSlow     = closeCause{code: websocket.ClosePolicyViolation, reason: "The client did not read its messages fast enough."}
	closeUnacked  = closeCause{code: websocket.ClosePolicyViolation, reason: "The client did not acknowledge its messages fast enough."}
	closeTooBig   = closeCause{code: websocket.CloseMessageTooBig, reason: fmt.Sprintf("The message exceeds the maximum size of %d bytes.", maxMessageSize)}
	closeInternal = closeCause{code: websocket.CloseInternalServerErr, reason: "Internal server error."}
)

// closeError ends the reader with a close the hub chose.
type closeError struct{ closeCause }

func (e *closeError) Error() string { return e.reason }

func closeWith(code int, reason string) error {
	return &closeError{closeCause{code: code, reason: reason}}
}

// queued is one item of a connection's send queue.
type queued struct {
	b       []byte // a JSON frame, or a simple client's raw data; never changed once queued
	binary  bool   // send as a binary WebSocket message
	message bool   // a message frame: numbered on the reliable subprotocol
	ping    bool   // a WebSocket ping control frame
}

// conn is one Web PubSub client connection. The reader (the HTTP
// handler's goroutine) decodes and answers frames; the writer writes what
// the queue holds; event handler calls run on goroutines of their own.
type conn struct {
	hub      *Hub
	ws       *websocket.Conn
	id       string
	user     string
	space    *space
	protocol string // the subprotocol; "" for a simple WebSocket client
	reliable bool
	origin   string // the host the client dialled: WebHook-Request-Origin upstream
	roles    *roleSet
	log      zerolog.Logger

	queue      chan queued
	closing    chan struct{}
	closeOnce  sync.Once
	closeWith  closeCause // set before closing is closed
	abortTimer atomic.Pointer[time.Timer]
	writerDone chan struct{}
	closed     atomic.Bool
	pingQueued atomic.Bool
	lastRead   atomic.Int64
	lastWrite  atomic.Int64

	ctx        context.Context // ends with the connection, cancelling event handler calls
	cancel     context.CancelFunc
	events     sync.WaitGroup
	eventSlots chan struct{}

	dec  webpubsub.Decoder // reader-owned
	in   []byte            // reader-owned
	acks ackWindow         // reader-owned

	seq     uint64 // writer-owned: the last sequenceId sent
	out     []byte // writer-owned
	unacked unackedLog

	groups map[string]struct{} // guarded by Host.Mu
}

// newConn builds the connection of socket ws (nil in fuzz tests, which
// call handle directly) speaking protocol.
func newConn(h *Hub, ws *websocket.Conn, protocol string, s *space, claims clientClaims, origin string) *conn {
	id := core.NewID()
	c := &conn{
		hub: h, ws: ws, id: id, user: claims.UserID, space: s,
		protocol: protocol, reliable: webpubsub.IsReliable(protocol),
		origin: origin, roles: newRoleSet(claims.Roles),
		log:        h.Log.With().Str("connection", id).Str("service", "webpubsub").Logger(),
		queue:      make(chan queued, h.Config.SendQueueSize),
		closing:    make(chan struct{}),
		writerDone: make(chan struct{}),
		eventSlots: make(chan struct{}, eventsInFlight),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	now := h.Now()
	c.lastRead.Store(now)
	c.lastWrite.Store(now)
	return c
}

// serve runs the connection to its end: the connected message first, then
// the frames the client sends.
func (c *conn) serve(groups []string) {
	if c.protocol != "" {
		connected := webpubsub.Frame{Kind: webpubsub.KindConnected, UserID: c.user, ConnectionID: c.id}
		if c.reliable {
			connected.ReconnectionToken = core.NewID()
		}
		b, _ := webpubsub.AppendFrame(nil, &connected) // a connected frame always encodes
		c.queue <- queued{b: b}                        // the queue is empty and holds at least one
	}
	c.ws.SetPongHandler(func(string) error { c.lastRead.Store(c.hub.Now()); return nil })
	c.hub.register(c, groups)
	c.log.Debug().Str("protocol", c.protocol).Msg("client connected")
	go c.writeLoop()
	c.finish(c.readSafely())
}

func (c *conn) readSafely() (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.hub.NotePanic(c.log, r)
			err = &closeError{closeInternal}
		}
	}()
	for {
		kind, r, err := c.ws.NextReader()
		if err != nil {
			return err
		}
		data, err := c.readFrame(r)
		if err != nil {
			return err
		}
		c.lastRead.Store(c.hub.Now())
		c.hub.Metrics.Received.Inc()
		err = c.handle(kind == websocket.BinaryMessage, data)
		c.releaseInput()
		if err != nil {
			return err
		}
	}
}

// readFrame reads one WebSocket message into the connection's buffer, up
// to the size limit. The buffer comes from the hub's pool and goes back
// after the frame is handled (releaseInput): idle connections hold none.
func (c *conn) readFrame(r io.Reader) ([]byte, error) {
	if c.in == nil {
		c.in = core.ReadBuffer()
	}
	for {
		if len(c.in) == cap(c.in) {
			c.in = append(make([]byte, 0, 2*cap(c.in)), c.in...)
		}
		n, err := r.Read(c.in[len(c.in):min(cap(c.in), maxMessageSize+1)])
		c.in = c.in[:len(c.in)+n]
		if len(c.in) > maxMessageSize {
			return nil, &closeError{closeTooBig}
		}
		if err == io.EOF {
			return c.in, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// releaseInput gives the input buffer back once a frame is handled; what
// the frame's data became was copied.
func (c *conn) releaseInput() {
	core.ReleaseReadBuffer(c.in)
	c.in = nil
}

// finish ends the connection after the reader stopped.
func (c *conn) finish(err error) {
	var ce *closeError
	if errors.As(err, &ce) {
		c.log.Info().Str("reason", ce.reason).Msg("closing connection")
		c.requestClose(ce.closeCause)
	} else {
		c.log.Debug().Err(err).Msg("client disconnected")
		c.requestClose(closeCause{})
	}
	<-c.writerDone
	c.abortTimer.Load().Stop()
	_ = c.ws.Close()
	c.cancel()
	c.events.Wait()
	c.hub.untrack(c)
}

// requestClose makes the writer send what is queued, then the reason, then
// the close frame; a socket that has not closed within core.CloseGrace (a
// client that stopped reading) is cut.
func (c *conn) requestClose(why closeCause) {
	c.closeOnce.Do(func() {
		c.closeWith = why
		c.closed.Store(true)
		if c.ws != nil {
			c.abortTimer.Store(time.AfterFunc(core.CloseGrace, func() { _ = c.ws.NetConn().Close() }))
		}
		close(c.closing)
	})
}

// enqueue queues o without blocking: a full queue means the client reads
// slower than the hub sends, and it is disconnected.
func (c *conn) enqueue(o queued) bool {
	if c.closed.Load() {
		return false
	}
	select {
	case c.queue <- o:
		return true
	default:
		c.log.Warn().Int("queue", cap(c.queue)).Msg("disconnecting slow consumer")
		c.requestClose(closeSlow)
		return false
	}
}

// enqueueOwn queues an answer to the connection's own request, waiting for
// room: a client that outpaces itself is slowed down, not dropped.
func (c *conn) enqueueOwn(o queued) bool {
	if c.closed.Load() {
		return false
	}
	select {
	case c.queue <- o:
		return true
	case <-c.closing:
		return false
	}
}

// enqueuePing queues a WebSocket ping unless one is already waiting.
func (c *conn) enqueuePing() {
	if c.closed.Load() || !c.pingQueued.CompareAndSwap(false, true) {
		return
	}
	select {
	case c.queue <- queued{ping: true}:
	default:
		c.pingQueued.Store(false)
	}
}

func (c *conn) writeLoop() {
	defer close(c.writerDone)
	defer func() {
		if r := recover(); r != nil {
			c.hub.NotePanic(c.log, r)
			c.requestClose(closeInternal)
			_ = c.ws.NetConn().Close()
		}
	}()
	for {
		select {
		case o := <-c.queue:
			if err := c.write(o, deadlineIn(writeTimeout)); err != nil {
				c.log.Debug().Err(err).Msg("write failed")
				c.requestClose(closeCause{})
				_ = c.ws.NetConn().Close() // unblocks the reader
				return
			}
		case <-c.closing:
			c.writeFinal()
			return
		}
	}
}

// writeFinal writes the rest of the queue, the disconnected message and
// the close frame, then gives the client core.CloseGrace to answer it.
func (c *conn) writeFinal() {
	deadline := deadlineIn(core.CloseGrace)
	for len(c.queue) > 0 { // only the writer takes from the queue
		if err := c.write(<-c.queue, deadline); err != nil {
			_ = c.ws.NetConn().Close()
			return
		}
	}
	why := c.closeWith
	if why.reason != "" && c.protocol != "" && !why.quiet {
		b, _ := webpubsub.AppendFrame(nil, &webpubsub.Frame{Kind: webpubsub.KindDisconnected, Message: why.reason})
		if c.write(queued{b: b}, deadline) != nil {
			_ = c.ws.NetConn().Close()
			return
		}
	}
	if why.code == 0 {
		why.code = websocket.CloseNormalClosure
	}
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(why.code, closeReason(why.reason)), deadline)
	_ = c.ws.SetReadDeadline(deadlineIn(core.CloseGrace))
}

// write sends one queued item, numbering messages on the reliable
// subprotocol: the shared frame gets its sequenceId spliced in first.
func (c *conn) write(o queued, deadline time.Time) error {
	if o.ping {
		c.pingQueued.Store(false)
		return c.wrote(c.ws.WriteControl(websocket.PingMessage, nil, deadline), false)
	}
	b := o.b
	if o.message && c.reliable {
		c.seq++
		c.out = strconv.AppendUint(append(c.out[:0], `{"sequenceId":`...), c.seq, 10)
		c.out = append(append(c.out, ','), o.b[1:]...)
		b = c.out
		if !c.unacked.add(c.seq, len(b)) {
			c.requestClose(closeUnacked)
			return nil
		}
	}
	_ = c.ws.SetWriteDeadline(deadline)
	kind := websocket.TextMessage
	if o.binary {
		kind = websocket.BinaryMessage
	}
	return c.wrote(c.ws.WriteMessage(kind, b), true)
}

func (c *conn) wrote(err error, counted bool) error {
	if err != nil {
		return fmt.Errorf("writing to client: %w", err)
	}
	c.lastWrite.Store(c.hub.Now())
	if counted {
		c.hub.Metrics.Sent.Inc()
	}
	return nil
}

// closeReason fits a reason into a close frame (123 bytes), cut between
// runes.
func closeReason(s string) string {
	const max = 123
	if len(s) <= max {
		return s
	}
	end := max
	for end > 0 && s[end]&0xC0 == 0x80 {
		end--
	}
	return s[:end]
}

func deadlineIn(d time.Duration) time.Time { return time.Now().Add(d) }

// unackedLog holds the sizes of the messages a reliable client has not
// acknowledged. The service keeps at most 1000 messages or 16 MB of them;
// past either the connection is closed for good.
type unackedLog struct {
	mu      sync.Mutex
	pending []unackedMessage
	bytes   int
}

type unackedMessage struct {
	seq  uint64
	size int
}

const (
	maxUnacked      = 1000
	maxUnackedBytes = 16 << 20
)

// add records message seq; false when that is one too many.
func (l *unackedLog) add(seq uint64, size int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) >= maxUnacked || l.bytes+size > maxUnackedBytes {
		return false
	}
	l.pending = append(l.pending, unackedMessage{seq, size})
	l.bytes += size
	return true
}

// ack forgets every message up to seq: sequenceAck is cumulative.
func (l *unackedLog) ack(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for n < len(l.pending) && l.pending[n].seq <= seq {
		l.bytes -= l.pending[n].size
		n++
	}
	l.pending = l.pending[n:]
	if len(l.pending) == 0 {
		l.pending = l.pending[:0:0] // let the array go
	}
}

func (l *unackedLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// ackWindowSize is how many recent ackIds a connection remembers to answer
// a repeat with Duplicate.
const ackWindowSize = 256

// ackWindow remembers the last ackWindowSize ackIds of a connection.
type ackWindow struct {
	seen map[uint64]struct{}
	ring []uint64
	next int
}

// first records id and reports whether it is new.
func (w *ackWindow) first(id uint64) bool {
	if _, dup := w.seen[id]; dup {
		return false
	}
	if w.seen == nil {
		w.seen = make(map[uint64]struct{})
	}
	if len(w.ring) < ackWindowSize {
		w.ring = append(w.ring, id)
	} else {
		delete(w.seen, w.ring[w.next])
		w.ring[w.next] = id
		w.next = (w.next + 1) % ackWindowSize
	}
	w.seen[id] = struct{}{}
	return true
}
