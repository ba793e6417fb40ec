package signalrhub

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/rs/zerolog"
)

// Close message errors, worded like ASP.NET's where ASP.NET has one.
const (
	errMsgGeneric       = "Connection closed with an error."
	errMsgClientTimeout = "Connection closed with an error. The client sent nothing within the client timeout."
	errMsgSlowConsumer  = "Connection closed with an error. The client did not read its messages fast enough."
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

// conn is one client connection. The reader goroutine (the HTTP handler's)
// parses, dispatches and writes its own replies from the outbox; the writer
// goroutine writes what other goroutines queue. wmu keeps their writes apart.
type conn struct {
	hub      *Hub
	t        transport.Conn
	id       string
	space    *space
	user     string // the nameid of an Azure client token; "" otherwise
	textOnly bool   // the transport carries only Text (Server-Sent Events)
	lp       *transport.LongPolling
	log      zerolog.Logger

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
	lastRead   atomic.Int64
	lastWrite  atomic.Int64
	wmu        sync.Mutex // serializes every transport write

	// Reader-owned state.
	cd         *codec // set by the handshake; safe to read once handshaken
	in         []byte
	parsed     int
	dispatchFn func(*signalr.Message) error
	uploads    map[string]*upload
	outbox     outbox

	mu      sync.Mutex
	streams map[string]*echoStream // running StreamingEcho calls by invocation id
	pushes  atomic.Int32           // running ServerPush calls

	groups map[string]struct{} // guarded by Host.Mu
}

// identity is who a connection is: fixed at negotiate, or at connect when
// negotiation was skipped.
type identity struct {
	id    string
	space *space
	user  string
}

func newConn(h *Hub, t transport.Conn, who identity) *conn {
	c := &conn{
		hub:        h,
		t:          t,
		id:         who.id,
		space:      who.space,
		user:       who.user,
		log:        h.Log.With().Str("connection", who.id).Logger(),
		queue:      make(chan *frame, h.Config.SendQueueSize),
		closing:    make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	c.dispatchFn = c.dispatch
	now := h.Now()
	c.lastRead.Store(now)
	c.lastWrite.Store(now)
	return c
}

// serve runs the connection to its end on the calling goroutine.
func (c *conn) serve() {
	go c.writeLoop()
	_ = c.t.SetReadDeadline(time.Now().Add(c.hub.cfg.HandshakeTimeout))
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
		if err := c.flushBeforeRead(); err != nil {
			return err
		}
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
			c.in = core.ReadBuffer()
		}
		if len(c.in) == cap(c.in) {
			c.in = append(make([]byte, 0, 2*cap(c.in)), c.in...)
		}
		if err := c.flushBeforeRead(); err != nil {
			return err
		}
		n, err := r.Read(c.in[len(c.in):cap(c.in)])
		if n > 0 {
			c.in = c.in[:len(c.in)+n]
			c.lastRead.Store(c.hub.Now())
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
		record, rest, ok := signalr.SplitHandshake(data)
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
	c.hub.Metrics.Received.Add(float64(c.parsed))
	if err != nil {
		return err
	}
	c.in = c.in[:copy(c.in, rest)]
	return nil
}

// parseRecords dispatches every complete record in data, checking each (and
// the unfinished tail) against the size limit, and returns the tail.
func (c *conn) parseRecords(data []byte) ([]byte, error) {
	for {
		n, size, err := c.cd.nextRecord(data)
		if err != nil {
			return nil, &closeError{msg: errMsgGeneric, cause: err}
		}
		if err := c.checkSize(size); err != nil {
			return nil, err
		}
		if n == 0 {
			return data, nil
		}
		if _, err := c.cd.ParseMessages(data[:n], c.dispatchFn); err != nil {
			if errors.Is(err, signalr.ErrProtocol) {
				return nil, &closeError{msg: errMsgGeneric, cause: err}
			}
			return nil, err
		}
		if err := c.flushIfFull(); err != nil {
			return nil, err
		}
		data = data[n:]
	}
}

// checkSize rejects an unfinished record that is already over the limit.
func (c *conn) checkSize(pending int) error {
	if max := c.hub.cfg.MaxMessageSize; int64(pending) > max {
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
	core.ReleaseReadBuffer(c.in)
	c.in = nil
}

func (c *conn) handshake(record []byte) error {
	req, err := signalr.ParseHandshakeRequest(record)
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
	if c.textOnly && cd.TransferFormat() != signalr.TextFormat {
		return c.refuseHandshake(fmt.Sprintf(
			"Cannot use the '%s' protocol on the current transport. The transport does not support '%s' transfer format.",
			req.Protocol, cd.TransferFormat()))
	}
	c.cd = cd
	c.binary.Store(cd.TransferFormat() == signalr.BinaryFormat)
	_ = c.t.SetReadDeadline(time.Time{})
	c.outbox.appendHandshake(signalr.AppendHandshakeResponse(nil, ""))
	c.reply(invocation("OnConnected", cd.quote(nil, c.id)))
	if err := c.registerAndFlush(); err != nil {
		return err
	}
	c.log.Debug().Str("protocol", req.Protocol).Msg("client connected")
	return nil
}

func (c *conn) refuseHandshake(msg string) error {
	c.log.Debug().Str("reason", msg).Msg("handshake refused")
	c.outbox.appendHandshake(signalr.AppendHandshakeResponse(nil, msg))
	return errHandshakeDone
}

func (c *conn) dispatch(m *signalr.Message) error {
	// m and its raw values are valid until dispatch returns: every method
	// encodes what it sends before then, and what outlives the call (a
	// stream's items, a delayed delivery) is detached where it is kept, so
	// the hub copies no message it answers at once.
	c.parsed++
	if c.closed.Load() {
		return errClosing
	}
	if m.Type <= signalr.CancelInvocationType && !c.hub.WithinRate(c.space.Limiter) {
		return &closeError{msg: throttle.MessageLimitText}
	}
	switch m.Type {
	case signalr.InvocationType:
		c.invoke(m, false)
	case signalr.StreamInvocationType:
		c.invoke(m, true)
	case signalr.StreamItemType:
		c.uploadItem(m)
	case signalr.CompletionType:
		c.uploadDone(m)
	case signalr.CancelInvocationType:
		c.cancelStream(m.InvocationID)
	case signalr.CloseType:
		return errClientClosed
	}
	// Ping, Ack and Sequence need nothing beyond resetting the client timeout.
	return nil
}

// finish ends the connection after the reader stopped.
func (c *conn) finish(err error) {
	c.t.StopReading()
	var ce *closeError
	switch {
	case errors.As(err, &ce):
		c.log.Info().Err(err).Msg("closing connection")
		_ = c.flush() // replies to the records before the bad one
		c.requestClose(closeWithError(ce.msg))
	case errors.Is(err, errHandshakeDone):
		_ = c.flush() // the handshake refusal
		c.requestClose(nil)
	case errors.Is(err, errClientClosed), errors.Is(err, errClosing):
		c.requestClose(nil)
	case !c.handshaken.Load() && transport.IsTimeout(err):
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
	c.outbox.release()
	c.drainQueue()
}

func (c *conn) releaseInputAlways() {
	if c.in != nil {
		c.in = c.in[:0]
		c.releaseInput()
	}
}
