package transport

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errTransportEnded = errors.New("transport ended")
	errClientGone     = errors.New("client closed the event stream")
)

// deadlineError is the read deadline passing on an HTTP transport; it is a
// net.Error whose Timeout is true, like a socket's.
type deadlineError struct{}

func (deadlineError) Error() string   { return "read deadline exceeded" }
func (deadlineError) Timeout() bool   { return true }
func (deadlineError) Temporary() bool { return true }

// Inbox is the send half of Server-Sent Events and Long Polling: every POST
// hands its body to the connection's reader and is answered 200 once the
// reader has processed it, so the hub's replies are queued before the
// client learns its send went through. The reader holds at most one POST.
type Inbox struct {
	posts   chan *post
	busy    atomic.Bool   // a POST is in progress; a concurrent one gets 409
	ended   chan struct{} // closed once the connection reads no more
	endOnce sync.Once

	mu       sync.Mutex
	cur      *post // the POST the reader holds
	deadline time.Time
}

// post is one POST request's body on its way through the reader.
type post struct {
	body      io.Reader
	remaining int64 // body bytes not yet read; negative when unknown
	rc        *http.ResponseController
	released  chan struct{} // closed when the reader is done with body
	ended     atomic.Bool   // the body returned EOF or an error
	cut       bool          // a read deadline was forced on its socket; guarded by Inbox.mu
}

func (p *post) Read(b []byte) (int, error) {
	n, err := p.body.Read(b)
	p.remaining -= int64(n)
	if err != nil {
		p.ended.Store(true)
	}
	return n, err
}

func newInbox() Inbox {
	return Inbox{posts: make(chan *post), ended: make(chan struct{})}
}

// next releases the POST just read and waits for the next one; gone, when
// not nil, ends the wait with errClientGone.
//
// The read deadline (the handshake timeout) bounds this wait only, not the
// reading of a body: a deadline on the socket would outlive the request on
// a keep-alive connection that other requests (of any connection) reuse.
func (in *Inbox) next(gone <-chan struct{}) (io.Reader, error) {
	in.release()
	in.mu.Lock()
	deadline := in.deadline
	in.mu.Unlock()
	var expired <-chan time.Time
	if !deadline.IsZero() {
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, deadlineError{}
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case p := <-in.posts:
		in.mu.Lock()
		defer in.mu.Unlock()
		in.cur = p
		return p, nil
	case <-in.ended:
		return nil, errTransportEnded
	case <-gone:
		return nil, errClientGone
	case <-expired:
		return nil, deadlineError{}
	}
}

func (in *Inbox) release() {
	in.mu.Lock()
	p := in.cur
	in.cur = nil
	in.mu.Unlock()
	if p != nil {
		close(p.released)
	}
}

// buffered is how much of the current POST is still to come: replies are
// held back until it is read, so one POST gets one batch of replies.
func (in *Inbox) buffered() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cur == nil || in.cur.remaining <= 0 {
		return 0
	}
	return int(min(in.cur.remaining, 1<<30))
}

func (in *Inbox) setReadDeadline(t time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.deadline = t
}

// end stops the reader: its wait for a POST ends, a body read in progress
// fails, and later POSTs get 404. Cutting a body leaves a deadline on its
// socket, so that POST's answer closes the socket rather than let it be
// reused.
func (in *Inbox) end() {
	in.endOnce.Do(func() { close(in.ended) })
	in.mu.Lock()
	defer in.mu.Unlock()
	if p := in.cur; p != nil && !p.ended.Load() {
		p.cut = true
		_ = p.rc.SetReadDeadline(time.Now())
	}
}

// Busy reports whether a POST is in progress.
func (in *Inbox) Busy() bool { return in.busy.Load() }

// stopReading is StopReading for both HTTP transports.
func (in *Inbox) stopReading() {
	in.end()
	in.release()
}

// ServePost runs one POST: 409 while another is in progress (the
// connection stays open), 404 once the connection reads no more, else 200
// after the reader processed the body.
func (in *Inbox) ServePost(w http.ResponseWriter, r *http.Request) {
	if !in.busy.CompareAndSwap(false, true) {
		WriteText(w, http.StatusConflict, "Another send request is already in progress.")
		return
	}
	defer in.busy.Store(false)
	p := &post{body: r.Body, remaining: r.ContentLength, rc: http.NewResponseController(w), released: make(chan struct{})}
	select {
	case in.posts <- p:
	case <-in.ended:
		WriteText(w, http.StatusNotFound, "No Connection with that ID")
		return
	case <-r.Context().Done():
		return
	}
	<-p.released // the reader may still be reading r.Body until then
	in.mu.Lock()
	cut := p.cut
	in.mu.Unlock()
	if cut {
		w.Header().Set("Connection", "close")
	}
	WriteText(w, http.StatusOK, "")
}
