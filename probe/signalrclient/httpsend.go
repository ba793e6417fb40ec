package signalrclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// maxPostBatch is how many bytes of queued messages one POST carries at
// most, so batches stay within the 32 KiB receive limits hubs commonly
// apply to a request. A larger message goes alone.
const maxPostBatch = 32 << 10

// postSender is the HTTP POST send half of server-sent events and long
// polling. Writers queue framed messages; one goroutine at a time, started
// on demand, POSTs whatever is queued, so the server never sees two POSTs
// at once and messages written while a POST is out travel together in the
// next. A failed POST fails the transport, which ends the connection, the
// way a failed socket write does.
type postSender struct {
	t       *httpTransport
	header  http.Header
	timeout time.Duration // bounds one POST

	mu      sync.Mutex
	queue   []byte
	queued  uint64 // bytes ever queued
	acked   uint64 // bytes the server answered 200 for
	sending bool
	err     error         // why sending stopped for good
	acks    chan struct{} // closed when acked moves or sending stops; nil if nobody waits
	room    chan struct{} // a batch left the queue
}

func (s *postSender) init(t *httpTransport, o *Options) {
	s.t = t
	s.header = t.header.Clone()
	if o.Protocol.TransferFormat() == signalr.BinaryFormat {
		s.header.Set("Content-Type", "application/octet-stream")
	} else {
		s.header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	// Sends are queued, so no caller's context bounds a POST; a server
	// that does not answer one in time has stopped reading.
	s.timeout = o.ServerTimeout
	if o.WriteTimeout > 0 {
		s.timeout = o.WriteTimeout
	}
	s.room = make(chan struct{}, 1)
}

// enqueue copies b into the queue, waiting while a full batch is queued
// already, and makes sure a POST will carry it.
func (s *postSender) enqueue(b []byte) error {
	for {
		if s.t.ctx.Err() != nil {
			return s.stopped()
		}
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if len(s.queue) == 0 || len(s.queue)+len(b) <= maxPostBatch {
			s.append(b)
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		select {
		case <-s.room:
		case <-s.t.ctx.Done():
			return s.stopped()
		}
	}
}

// append queues b; s.mu is held.
func (s *postSender) append(b []byte) {
	if need := len(s.queue) + len(b); need > cap(s.queue) {
		// Doubling keeps the copies of a growing batch few. A fresh
		// buffer per batch: the HTTP client may read a request body after
		// Do returns, so a sent batch is never reused.
		grown := make([]byte, len(s.queue), max(need, min(2*cap(s.queue), maxPostBatch), 512))
		copy(grown, s.queue)
		s.queue = grown
	}
	s.queue = append(s.queue, b...)
	s.queued += uint64(len(b))
	if !s.sending {
		s.sending = true
		go s.run()
	}
}

// run POSTs batches until the queue is empty or a POST fails.
func (s *postSender) run() {
	for {
		s.mu.Lock()
		batch := s.queue
		if len(batch) == 0 {
			s.sending = false
			s.mu.Unlock()
			return
		}
		s.queue = nil
		s.mu.Unlock()
		select {
		case s.room <- struct{}{}:
		default:
		}
		ctx, cancel := context.WithTimeout(s.t.ctx, s.timeout)
		err := s.post(ctx, batch)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && s.t.ctx.Err() == nil {
			err = fmt.Errorf("%w: %s: a send got no answer within %s; the server stopped reading", clientconn.ErrStalled, s.t.kind, s.timeout)
		}
		cancel()
		s.settle(len(batch), err)
		if err != nil {
			s.t.fail(err)
			return
		}
	}
}

// settle records a POST's outcome and wakes whoever waits for it.
func (s *postSender) settle(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err, s.sending = err, false
	} else {
		s.acked += uint64(n)
	}
	if s.acks != nil {
		close(s.acks)
		s.acks = nil
	}
}

// stopped is the error for writers once the transport closed.
func (s *postSender) stopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if f := s.t.failure.Load(); f != nil {
		return *f
	}
	return errTransportClosed
}

var errTransportClosed = errors.New("probe: transport closed")

// flush waits until the server accepted everything queued so far, done
// is closed, or sending stopped.
func (s *postSender) flush(done <-chan struct{}) error {
	s.mu.Lock()
	target := s.queued
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if s.acked >= target {
			s.mu.Unlock()
			return nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if s.acks == nil {
			s.acks = make(chan struct{})
		}
		acks := s.acks
		s.mu.Unlock()
		select {
		case <-acks:
		case <-done:
			return context.DeadlineExceeded
		case <-s.t.ctx.Done():
			return s.stopped()
		}
	}
}

// post sends body in one POST and reports the answer. 200 means the
// server processed it; anything else is a *TransportError.
func (s *postSender) post(ctx context.Context, body []byte) error {
	req, err := s.t.newRequest(ctx, http.MethodPost, s.t.url, bytes.NewReader(body), s.header)
	if err != nil {
		return err
	}
	res, err := s.t.client.Do(req)
	if err != nil {
		return s.postFailure(err)
	}
	s.t.obs.HTTPResponse(EndpointSend, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		return s.t.requestError(EndpointSend, res)
	}
	discardBody(res)
	s.t.obs.BytesSent(len(body))
	return nil
}

// postFailure explains a POST that got no response.
func (s *postSender) postFailure(err error) error {
	if f := s.t.failure.Load(); f != nil {
		return *f
	}
	return &TransportError{Transport: s.t.kind, Request: EndpointSend, Err: redact.URLError(err)}
}
