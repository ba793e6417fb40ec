package signalrhub

import (
	"encoding/json"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/signalr"
)

// requestClose starts ending the connection: no more messages are queued,
// the writer flushes what is queued plus msg (when the handshake is done),
// and the socket is cut after core.CloseGrace whatever the client does.
func (c *conn) requestClose(msg *signalr.Message) {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		if msg != nil && c.handshaken.Load() {
			if f, err := encodeFrame(c.cd, msg); err == nil {
				c.closeMsg = f
			}
		}
		c.abortTimer = time.AfterFunc(core.CloseGrace, c.t.Abort)
		close(c.closing)
	})
}

func closeWithError(msg string) *signalr.Message {
	return &signalr.Message{Type: signalr.CloseType, Error: msg, HasError: true}
}

// enqueue queues f for the writer without ever blocking. A full queue means
// the client reads slower than the hub sends: it is disconnected rather
// than allowed to grow the hub's memory.
func (c *conn) enqueue(f *frame) bool {
	if c.closed.Load() {
		return false
	}
	f.retain()
	select {
	case c.queue <- f:
		return true
	default:
		f.release()
		c.log.Warn().Int("queue", cap(c.queue)).Msg("disconnecting slow consumer")
		c.requestClose(closeWithError(errMsgSlowConsumer))
		return false
	}
}

// enqueueOwn queues f for a message the connection's own stream goroutines
// produce. A full queue makes them wait for the writer: a client that
// outpaces itself is slowed down, as by any echo server, rather than dropped.
func (c *conn) enqueueOwn(f *frame) bool {
	if c.closed.Load() {
		return false
	}
	f.retain()
	select {
	case c.queue <- f:
		return true
	default:
	}
	select {
	case c.queue <- f:
		return true
	case <-c.closing:
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
	case c.queue <- c.hub.pings[c.cd.index]:
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

// sendQueued encodes m and queues it to this connection, waiting for room;
// for the connection's goroutines other than the reader (streams).
func (c *conn) sendQueued(m *signalr.Message) {
	f, err := encodeFrame(c.cd, m)
	if err != nil {
		c.log.Error().Err(err).Msg("cannot encode message")
		return
	}
	c.enqueueOwn(f)
	f.release()
}

func invocation(target string, args ...[]byte) *signalr.Message {
	m := &signalr.Message{Type: signalr.InvocationType, Target: target, Arguments: make([]json.RawMessage, len(args))}
	for i, a := range args {
		m.Arguments[i] = a
	}
	return m
}

// completion answers an invocation: a result, an error, or neither (void).
func completion(invocationID string, result []byte, errMsg string) *signalr.Message {
	m := &signalr.Message{Type: signalr.CompletionType, InvocationID: invocationID, Result: result}
	if errMsg != "" {
		m.Result, m.Error, m.HasError = nil, errMsg, true
	}
	return m
}
