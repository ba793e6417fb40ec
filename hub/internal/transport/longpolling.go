package transport

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MaxPollOutput is how much output waits for the next poll before writers
// block; a poll takes all of it at once.
const MaxPollOutput = MaxBatchBytes

var errPollTimeout = errors.New("no poll took the data in time")

// LongPolling is the Long Polling transport: the client polls with GETs,
// each answered with everything written since the last one, and sends by
// POST. Output waits in a buffer held only while non-empty; writers block
// while it is full, so a client that stops polling fills its send queue
// and is dropped like any slow consumer.
type LongPolling struct {
	Inbox
	now     func() int64
	drained chan struct{} // signalled when output was taken or the state changed

	mu        sync.Mutex
	out       *[]byte // pending output, a batch buffer; nil when empty
	poll      *pollWaiter
	polling   bool  // a poll is waiting
	lastPoll  int64 // hub clock when the last poll ended
	closing   bool  // the hub wrote its last message
	finished  bool  // a poll was told 204 after closing
	gone      bool  // aborted, or deleted by the client: output is dropped
	wDeadline time.Time
}

type pollWaiter struct{ wake chan struct{} }

// NewLongPolling is a Long Polling transport on the hub's clock now.
func NewLongPolling(now func() int64) *LongPolling {
	return &LongPolling{Inbox: newInbox(), now: now, drained: make(chan struct{}, 1), lastPoll: now()}
}

// NextReader waits for the next POST.
func (t *LongPolling) NextReader() (io.Reader, error) { return t.next(nil) }

// StopReading ends the wait for POSTs.
func (t *LongPolling) StopReading() { t.stopReading() }

// Buffered is what the current POST still has to come.
func (t *LongPolling) Buffered() int { return t.buffered() }

// SetReadDeadline bounds the wait for a POST.
func (t *LongPolling) SetReadDeadline(d time.Time) error { t.setReadDeadline(d); return nil }

// SetWriteDeadline bounds a write's wait for room.
func (t *LongPolling) SetWriteDeadline(d time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.wDeadline = d
	return nil
}

// WriteMessage appends data for the next poll, waiting while the buffer is
// full. A single message larger than the buffer still goes through alone.
func (t *LongPolling) WriteMessage(_ bool, data []byte) error {
	for {
		t.mu.Lock()
		if t.gone {
			t.mu.Unlock()
			return errTransportEnded
		}
		if t.out == nil || len(*t.out)+len(data) <= MaxPollOutput {
			t.appendLocked(data)
			t.mu.Unlock()
			return nil
		}
		deadline := t.wDeadline
		t.mu.Unlock()
		if err := t.waitDrained(deadline); err != nil {
			return err
		}
	}
}

func (t *LongPolling) appendLocked(data []byte) {
	if t.out == nil {
		t.out = GetBatch()
	}
	*t.out = append(*t.out, data...)
	t.wakePollLocked()
}

func (t *LongPolling) wakePollLocked() {
	if t.poll != nil {
		select {
		case t.poll.wake <- struct{}{}:
		default:
		}
	}
}

func (t *LongPolling) signalDrained() {
	select {
	case t.drained <- struct{}{}:
	default:
	}
}

func (t *LongPolling) waitDrained(deadline time.Time) error {
	if deadline.IsZero() {
		<-t.drained
		return nil
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-t.drained:
		return nil
	case <-timer.C:
		return errPollTimeout
	}
}

// CloseGracefully lets polls collect the rest of the output, then answers
// the next poll 204 so the client knows the connection ended; it returns
// when that is done, the client deleted the connection, or deadline passed.
func (t *LongPolling) CloseGracefully(deadline time.Time) {
	t.end()
	t.mu.Lock()
	t.closing = true
	t.wakePollLocked()
	t.mu.Unlock()
	for {
		t.mu.Lock()
		done := t.gone || (t.out == nil && t.finished)
		t.mu.Unlock()
		if done || t.waitDrained(deadline) != nil {
			return
		}
	}
}

// Abort drops pending output and ends any waiting poll with 204.
func (t *LongPolling) Abort() { t.Terminate() }

// Terminate is Abort, and the client's DELETE.
func (t *LongPolling) Terminate() {
	t.end()
	t.mu.Lock()
	t.gone, t.closing = true, true
	t.wakePollLocked()
	t.mu.Unlock()
	t.signalDrained()
}

// IdleFor is how long no poll has been waiting; 0 while one is.
func (t *LongPolling) IdleFor(now int64) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.polling {
		return 0
	}
	return now - t.lastPoll
}

// ServePoll answers one poll: with the pending output (200), empty when the
// poll timeout passes first (200), or 204 when a newer poll replaced it or
// the connection ended.
func (t *LongPolling) ServePoll(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	p := &pollWaiter{wake: make(chan struct{}, 1)}
	t.mu.Lock()
	t.wakePollLocked() // the older poll, if any, finds it was replaced
	t.poll, t.polling = p, true
	t.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		if out, status := t.take(p); status != 0 {
			t.answerPoll(w, status, out)
			return
		}
		select {
		case <-p.wake:
		case <-timer.C:
			t.leave(p)
			WritePollEmpty(w, http.StatusOK)
			return
		case <-r.Context().Done():
			t.leave(p)
			return
		}
	}
}

// take decides a waiting poll's answer: status 0 means keep waiting.
func (t *LongPolling) take(p *pollWaiter) (*[]byte, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.poll != p:
		return nil, http.StatusNoContent // replaced by a newer poll
	case t.gone:
	case t.out != nil:
		out := t.out
		t.out = nil
		t.leaveLocked(p)
		t.signalDrained()
		return out, http.StatusOK
	case !t.closing:
		return nil, 0
	}
	t.leaveLocked(p)
	t.finished = true
	t.signalDrained()
	return nil, http.StatusNoContent
}

func (t *LongPolling) leave(p *pollWaiter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.leaveLocked(p)
}

func (t *LongPolling) leaveLocked(p *pollWaiter) {
	if t.poll == p {
		t.poll, t.polling, t.lastPoll = nil, false, t.now()
	}
}

func (t *LongPolling) answerPoll(w http.ResponseWriter, status int, out *[]byte) {
	if out == nil {
		WritePollEmpty(w, status)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(*out)))
	w.WriteHeader(status)
	_, _ = w.Write(*out)
	PutBatch(out)
}

// WritePollEmpty answers a poll without data: 200 for a timeout (poll
// again), 204 for the end of the connection.
func WritePollEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "text/plain")
	if status == http.StatusOK {
		w.Header().Set("Content-Length", "0")
	}
	w.WriteHeader(status)
}

// SetPollHeaders marks every Long Polling response uncacheable and long
// running, as ASP.NET does.
func SetPollHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-store")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")
	h.Set("Long-Running", "true")
}

var _ Conn = (*LongPolling)(nil)
