package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/probe"
)

const (
	// readBufSize is the per-connection input buffer, borrowed from a pool
	// only while a message is being read.
	readBufSize = 4096
	// maxBatchBytes caps how many queued records one transport message
	// carries; batching saves a write per record under load.
	maxBatchBytes = 64 * 1024
	// closeGrace bounds how long a closing connection may take to flush its
	// queue and Close message before the socket is cut.
	closeGrace = 2 * time.Second
)

// Close message errors, worded like ASP.NET's where ASP.NET has one.
const (
	errMsgGeneric      = "Connection closed with an error."
	errMsgClientTimout = "Connection closed with an error. The client sent nothing within the client timeout."
	errMsgSlowConsumer = "Connection closed with an error. The client did not read its messages fast enough."
)

var (
	errClientClosed  = errors.New("client sent Close")
	errClosing       = errors.New("connection is closing")
	errHandshakeDone = errors.New("handshake refused")
)

// closeError ends a connection with a Close message carrying msg.
type closeError struct {
	msg   string
	cause error
}

func (e *closeError) Error() string {
	if e.cause != nil {
		return e.msg + " (" + e.cause.Error() + ")"
	}
	return e.msg
}

func (e *closeError) Unwrap() error { return e.cause }

var readBufPool = sync.Pool{New: func() any { return new([readBufSize]byte) }}

// conn is one client connection. The reader goroutine (the HTTP handler's)
// parses and dispatches; the writer goroutine owns every write.
type conn struct {
	hub *Hub
	t   transport
	id  string
	log zerolog.Logger

	queue      chan *frame
	closing    chan struct{} // closed by requestClose
	closeOnce  sync.Once
	closeMsg   *frame // written last; nil ends without a Close message
	abortTimer *time.Timer
	writerDone chan struct{}
	closed     atomic.Bool
	handshaken atomic.Bool
	binary     atomic.Bool
	pingQueued atomic.Bool
	wmu        sync.Mutex
	unwritten  atomic.Int32
	lastRead   atomic.Int64
	lastWrite  atomic.Int64

	// Reader-owned state.
	cd         *codec // set by the handshake; safe to read once handshaken
	in         []byte
	parsed     int
	dispatchFn func(*probe.Message) error
	uploads    map[string]*upload

	mu      sync.Mutex
	streams map[string]*echoStream // running StreamingEcho calls by invocation id

	groups map[string]struct{} // guarded by hub.mu
}

func newConn(h *Hub, t transport, id string) *conn {
	c := &conn{
		hub:        h,
		t:          t,
		id:         id,
		log:        h.log.With().Str("connection", id).Logger(),
		queue:      make(chan *frame, h.opts.SendQueueSize),
		closing:    make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	c.dispatchFn = c.dispatch
	now := h.now()
	c.lastRead.Store(now)
	c.lastWrite.Store(now)
	return c
}

// serve runs the connection to its end on the calling goroutine.
func (c *conn) serve() {
	go c.writeLoop()
	_ = c.t.SetReadDeadline(time.Now().Add(c.hub.opts.HandshakeTimeout))
	c.finish(c.readSafely())
}

func (c *conn) readSafely() (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.hub.recovered(c, r)
			err = &closeError{msg: errMsgGeneric, cause: fmt.Errorf("panic: %v", r)}
		}
	}()
	for {
		r, err := c.t.NextReader()
		if err != nil {
			return err
		}
		if err := c.readMessage(r); err != nil {
			return err
		}
	}
}

// readMessage feeds one transport message through the record parser. Records
// may span transport messages; only the unfinished tail is kept.
func (c *conn) readMessage(r io.Reader) error {
	for {
		if c.in == nil {
			c.in = readBufPool.Get().(*[readBufSize]byte)[:0]
		}
		if len(c.in) == cap(c.in) {
			c.in = append(make([]byte, 0, 2*cap(c.in)), c.in...)
		}
		n, err := r.Read(c.in[len(c.in):cap(c.in)])
		if n > 0 {
			c.in = c.in[:len(c.in)+n]
			c.lastRead.Store(c.hub.now())
			if perr := c.process(); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			c.releaseInput()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (c *conn) process() error {
	data := c.in
	if c.cd == nil {
		record, rest, ok := probe.SplitHandshake(data)
		if !ok {
			return c.checkSize(len(data))
		}
		if err := c.checkSize(len(record)); err != nil {
			return err
		}
		if err := c.handshake(record); err != nil {
			return err
		}
		data = rest
	}
	c.parsed = 0
	rest, err := c.parseRecords(data)
	c.hub.metrics.received.Add(float64(c.parsed))
	if err != nil {
		return err
	}
	c.in = c.in[:copy(c.in, rest)]
	return c.checkSize(len(c.in))
}

// parseRecords dispatches every complete record in data, checking each
// against the size limit, and returns the unfinished tail.
func (c *conn) parseRecords(data []byte) ([]byte, error) {
	for {
		end := bytes.IndexByte(data, probe.RecordSeparator)
		if end < 0 {
			return data, nil
		}
		if err := c.checkSize(end); err != nil {
			return nil, err
		}
		if _, err := c.cd.ParseMessages(data[:end+1], c.dispatchFn); err != nil {
			if errors.Is(err, probe.ErrProtocol) {
				return nil, &closeError{msg: errMsgGeneric, cause: err}
			}
			return nil, err
		}
		data = data[end+1:]
	}
}

// checkSize rejects an unfinished record that is already over the limit.
func (c *conn) checkSize(pending int) error {
	if max := c.hub.opts.MaxMessageSize; int64(pending) > max {
		return &closeError{msg: fmt.Sprintf(
			"Connection closed with an error. The maximum message size of %dB was exceeded.", max)}
	}
	return nil
}

// releaseInput returns an empty input buffer to the pool between messages,
// so idle connections hold none.
func (c *conn) releaseInput() {
	if c.in == nil || len(c.in) > 0 {
		return
	}
	if cap(c.in) == readBufSize {
		readBufPool.Put((*[readBufSize]byte)(c.in[:readBufSize]))
	}
	c.in = nil
}

func (c *conn) handshake(record []byte) error {
	req, err := probe.ParseHandshakeRequest(record)
	if err != nil {
		return c.refuseHandshake("The handshake request is not valid.")
	}
	cd, ok := codecs[req.Protocol]
	if !ok {
		return c.refuseHandshake(fmt.Sprintf("Requested protocol '%s' is not available.", req.Protocol))
	}
	if *req.Version > cd.Version() || *req.Version < 0 {
		return c.refuseHandshake(fmt.Sprintf(
			"The server does not support version %d of the '%s' protocol.", *req.Version, req.Protocol))
	}
	c.cd = cd
	c.binary.Store(cd.TransferFormat() == probe.BinaryFormat)
	_ = c.t.SetReadDeadline(time.Time{})
	c.enqueueOwn(handshakeOK)
	c.sendInvocation("OnConnected", cd.quote(nil, c.id))
	if !c.hub.register(c) {
		return errClosing
	}
	c.handshaken.Store(true)
	c.log.Debug().Str("protocol", req.Protocol).Msg("client connected")
	return nil
}

var handshakeOK = handshakeFrame(probe.AppendHandshakeResponse(nil, ""))

func (c *conn) refuseHandshake(msg string) error {
	c.log.Debug().Str("reason", msg).Msg("handshake refused")
	c.enqueueOwn(handshakeFrame(probe.AppendHandshakeResponse(nil, msg)))
	return errHandshakeDone
}

func (c *conn) dispatch(m *probe.Message) error {
	c.parsed++
	if c.closed.Load() {
		return errClosing
	}
	switch m.Type {
	case probe.InvocationType:
		c.invoke(m, false)
	case probe.StreamInvocationType:
		c.invoke(m, true)
	case probe.StreamItemType:
		c.uploadItem(m)
	case probe.CompletionType:
		c.uploadDone(m)
	case probe.CancelInvocationType:
		c.cancelStream(m.InvocationID)
	case probe.CloseType:
		return errClientClosed
	}
	// Ping, Ack and Sequence need nothing beyond resetting the client timeout.
	return nil
}

// finish ends the connection after the reader stopped.
func (c *conn) finish(err error) {
	var ce *closeError
	switch {
	case errors.As(err, &ce):
		c.log.Info().Err(err).Msg("closing connection")
		c.requestClose(closeWithError(ce.msg))
	case errors.Is(err, errClientClosed), errors.Is(err, errClosing), errors.Is(err, errHandshakeDone):
		c.requestClose(nil)
	case !c.handshaken.Load() && isTimeout(err):
		c.log.Debug().Msg("handshake timed out")
		c.requestClose(nil)
	default:
		c.log.Debug().Err(err).Msg("client disconnected")
		c.requestClose(nil)
	}
	<-c.writerDone
	c.abortTimer.Stop()
	c.hub.untrack(c)
	c.releaseInputAlways()
	c.drainQueue()
}

func (c *conn) releaseInputAlways() {
	if c.in != nil {
		c.in = c.in[:0]
		c.releaseInput()
	}
}

// requestClose starts ending the connection: no more messages are queued,
// the writer flushes what is queued plus msg (when the handshake is done),
// and the socket is cut after closeGrace whatever the client does.
func (c *conn) requestClose(msg *probe.Message) {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		if msg != nil && c.handshaken.Load() {
			if f, err := encodeFrame(c.cd, msg); err == nil {
				c.closeMsg = f
			}
		}
		c.abortTimer = time.AfterFunc(closeGrace, c.t.Abort)
		close(c.closing)
	})
}

func closeWithError(msg string) *probe.Message {
	return &probe.Message{Type: probe.CloseType, Error: msg, HasError: true}
}

// enqueue queues f for the writer without ever blocking. A full queue means
// the client reads slower than the hub sends: it is disconnected rather
// than allowed to grow the hub's memory.
func (c *conn) enqueue(f *frame) bool {
	if c.closed.Load() {
		return false
	}
	f.retain()
	c.unwritten.Add(1)
	select {
	case c.queue <- f:
		return true
	default:
		c.unwritten.Add(-1)
		f.release()
		c.log.Warn().Int("queue", cap(c.queue)).Msg("disconnecting slow consumer")
		c.requestClose(closeWithError(errMsgSlowConsumer))
		return false
	}
}

// enqueueOwn queues f for a message the connection's own goroutines produce
// (replies, callbacks, stream items). A full queue makes them wait for the
// writer: a client that outpaces itself is slowed down through TCP, as with
// any echo server, rather than dropped.
func (c *conn) enqueueOwn(f *frame) bool {
	if c.closed.Load() {
		return false
	}
	if c.tryWriteDirect(f) {
		return true
	}
	f.retain()
	c.unwritten.Add(1)
	select {
	case c.queue <- f:
		return true
	default:
	}
	select {
	case c.queue <- f:
		return true
	case <-c.closing:
		c.unwritten.Add(-1)
		f.release()
		return false
	}
}

// enqueuePing queues a keep-alive unless one is already waiting; a busy
// writer is no reason to disconnect.
func (c *conn) enqueuePing() {
	if c.closed.Load() || !c.pingQueued.CompareAndSwap(false, true) {
		return
	}
	select {
	case c.queue <- c.hub.ping:
	default:
		c.pingQueued.Store(false)
	}
}

func (c *conn) drainQueue() {
	for {
		select {
		case f := <-c.queue:
			f.release()
		default:
			return
		}
	}
}

// send encodes m and queues it to this connection; only the connection's
// own goroutines call it.
func (c *conn) send(m *probe.Message) {
	f, err := encodeFrame(c.cd, m)
	if err != nil {
		c.log.Error().Err(err).Msg("cannot encode message")
		return
	}
	c.enqueueOwn(f)
	f.release()
}

func (c *conn) sendInvocation(target string, args ...[]byte) {
	m := probe.Message{Type: probe.InvocationType, Target: target, Arguments: make([]json.RawMessage, len(args))}
	for i, a := range args {
		m.Arguments[i] = a
	}
	c.send(&m)
}

// complete answers an invocation: a result, an error, or neither (void).
func (c *conn) complete(invocationID string, result []byte, errMsg string) {
	m := probe.Message{Type: probe.CompletionType, InvocationID: invocationID, Result: result}
	if errMsg != "" {
		m.Result, m.Error, m.HasError = nil, errMsg, true
	}
	c.send(&m)
}
