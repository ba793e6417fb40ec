package signalrclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// streamBuffer is how many items a stream holds for a slow reader before
// the read goroutine waits for it.
const streamBuffer = 64

// Send invokes target on the hub without an invocation id: the hub runs it
// and sends nothing back. Each argument must be one encoded value of the
// connection's hub protocol (JSON text for JSONProtocol).
func (c *Conn) Send(ctx context.Context, target string, args ...json.RawMessage) error {
	m := signalr.Message{Type: signalr.InvocationType, Target: target, Arguments: args}
	return c.writeMessage(ctx, &m)
}

// Invoke calls target and waits for its Completion. It returns the result
// (nil for a void method, the literal null for a null result), an
// *InvocationError when the hub reports an error, or ctx's error.
func (c *Conn) Invoke(ctx context.Context, target string, args ...json.RawMessage) (json.RawMessage, error) {
	id := c.newID()
	cl := &call{done: make(chan callResult, 1)}
	if err := c.register(id, cl, nil); err != nil {
		return nil, err
	}
	m := signalr.Message{Type: signalr.InvocationType, InvocationID: id, Target: target, Arguments: args}
	if err := c.writeMessage(ctx, &m); err != nil {
		c.unregister(id)
		return nil, err
	}
	select {
	case r := <-cl.done:
		return r.result, r.err
	case <-ctx.Done():
		c.unregister(id)
		return nil, ctx.Err()
	}
}

// Stream starts a server-to-client stream of target. Uploads, made with
// NewUpload, become its client-to-server streams (streamIds) and accept
// items once Stream has returned. Ending ctx cancels the stream.
func (c *Conn) Stream(ctx context.Context, target string, args []json.RawMessage, uploads ...*Upload) (*Stream, error) {
	streamIDs, err := c.claimUploads(uploads)
	if err != nil {
		return nil, err
	}
	s := &Stream{c: c, id: c.newID(), items: make(chan json.RawMessage, streamBuffer), cancelled: make(chan struct{})}
	if err := c.register(s.id, nil, s); err != nil {
		setUploadState(uploads, uploadNew)
		return nil, err
	}
	m := signalr.Message{Type: signalr.StreamInvocationType, InvocationID: s.id, Target: target, Arguments: args, StreamIDs: streamIDs}
	if err := c.writeMessage(ctx, &m); err != nil {
		c.unregister(s.id)
		setUploadState(uploads, uploadNew)
		return nil, err
	}
	setUploadState(uploads, uploadOpen)
	s.watch(ctx)
	return s, nil
}

// claimUploads reserves each upload for one invocation and returns their ids.
func (c *Conn) claimUploads(uploads []*Upload) ([]string, error) {
	if len(uploads) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(uploads))
	for i, u := range uploads {
		if u == nil || u.c != c {
			setUploadState(uploads[:i], uploadNew)
			return nil, errors.New("probe: upload belongs to another connection")
		}
		u.mu.Lock()
		free := u.state == uploadNew
		if free {
			u.state = uploadClaimed
		}
		u.mu.Unlock()
		if !free {
			setUploadState(uploads[:i], uploadNew)
			return nil, errors.New("probe: upload is already attached to an invocation")
		}
		ids = append(ids, u.id)
	}
	return ids, nil
}

func setUploadState(uploads []*Upload, state uploadState) {
	for _, u := range uploads {
		u.mu.Lock()
		u.state = state
		u.mu.Unlock()
	}
}

// Stream is a server-to-client stream started by Conn.Stream.
type Stream struct {
	c         *Conn
	id        string
	items     chan json.RawMessage
	cancelled chan struct{}
	cancelOne sync.Once

	// sendMu is held by the read goroutine while it hands over an item, so
	// that Cancel never closes items under it.
	sendMu      sync.Mutex
	itemsClosed bool

	stateMu   sync.Mutex
	ended     bool
	err       error
	stopWatch func() bool
}

// Items delivers the stream's items; it is closed when the stream ends.
func (s *Stream) Items() <-chan json.RawMessage { return s.items }

// Err is why the stream ended, once Items is closed: nil on a normal
// Completion, an *InvocationError from the hub, context.Canceled (or the
// stream context's error) after a cancel, or the connection's failure.
func (s *Stream) Err() error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.err
}

// Cancel asks the hub to stop the stream (CancelInvocation) and closes
// Items at once; later items are dropped.
func (s *Stream) Cancel(ctx context.Context) error {
	return s.cancel(ctx, context.Canceled)
}

func (s *Stream) cancel(ctx context.Context, reason error) error {
	s.cancelOne.Do(func() { close(s.cancelled) })
	pending := s.c.unregister(s.id)
	s.finish(reason)
	if !pending {
		return nil
	}
	return s.c.writeMessage(ctx, &signalr.Message{Type: signalr.CancelInvocationType, InvocationID: s.id})
}

// watch cancels the stream when ctx ends, until the stream finishes.
func (s *Stream) watch(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		wctx, cancel := context.WithTimeout(context.Background(), clientconn.InternalWriteTimeout)
		defer cancel()
		_ = s.cancel(wctx, ctx.Err())
	})
	s.stateMu.Lock()
	ended := s.ended
	if !ended {
		s.stopWatch = stop
	}
	s.stateMu.Unlock()
	if ended {
		stop()
	}
}

// push hands item to the reader of Items, waiting if its buffer is full,
// unless the stream is cancelled or the connection ends meanwhile.
func (s *Stream) push(item json.RawMessage, closing <-chan struct{}) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.itemsClosed {
		return
	}
	select {
	case s.items <- item:
	case <-s.cancelled:
	case <-closing:
	}
}

// finish ends the stream with err; only the first call counts.
func (s *Stream) finish(err error) {
	s.sendMu.Lock()
	if s.itemsClosed {
		s.sendMu.Unlock()
		return
	}
	s.itemsClosed = true
	s.stateMu.Lock()
	s.ended, s.err = true, err
	stop := s.stopWatch
	s.stateMu.Unlock()
	close(s.items)
	s.sendMu.Unlock()
	if stop != nil {
		stop()
	}
}

type uploadState int

const (
	uploadNew     uploadState = iota
	uploadClaimed             // named in an invocation being sent
	uploadOpen                // invocation sent; items may follow
	uploadDone                // completed
)

// Upload is a client-to-server stream. It accepts items only after the
// invocation that names it was sent, and none after Complete.
type Upload struct {
	c     *Conn
	id    string
	mu    sync.Mutex // held across each write, so Complete is the last item
	state uploadState
}

// NewUpload makes a client-to-server stream to pass to Stream.
func (c *Conn) NewUpload() *Upload { return &Upload{c: c, id: c.newID()} }

// Send streams one item (StreamItem) to the hub.
func (u *Upload) Send(ctx context.Context, item json.RawMessage) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.usable(); err != nil {
		return err
	}
	return u.c.writeMessage(ctx, &signalr.Message{Type: signalr.StreamItemType, InvocationID: u.id, Item: item})
}

// Complete ends the upload (Completion), with errMsg as its error unless
// errMsg is empty.
func (u *Upload) Complete(ctx context.Context, errMsg string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.usable(); err != nil {
		return err
	}
	m := signalr.Message{Type: signalr.CompletionType, InvocationID: u.id, Error: errMsg, HasError: errMsg != ""}
	if err := u.c.writeMessage(ctx, &m); err != nil {
		return err
	}
	u.state = uploadDone
	return nil
}

func (u *Upload) usable() error {
	switch u.state {
	case uploadOpen:
		return nil
	case uploadDone:
		return ErrUploadDone
	}
	return fmt.Errorf("%w (id %s)", ErrUploadNotStarted, u.id)
}
