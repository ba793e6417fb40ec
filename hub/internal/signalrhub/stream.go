package signalrhub

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/signalr"
)

// maxStreamsPerConnection bounds concurrent StreamingEcho calls per client.
const maxStreamsPerConnection = 32

// upload is a client-to-server stream. The reader goroutine owns the map
// that finds it and is the only sender on items.
type upload struct {
	items  chan uploadItem
	errMsg string // set before items is closed
}

type uploadItem struct {
	raw json.RawMessage
	at  int64 // hub clock at arrival, for slow mode
}

// echoStream is one running StreamingEcho call.
type echoStream struct {
	invocationID string
	uploadID     string
	cancel       chan struct{}
	cancelOnce   sync.Once
}

func (s *echoStream) stop() { s.cancelOnce.Do(func() { close(s.cancel) }) }

// startEcho begins StreamingEcho(stream, delayMs): each uploaded item is
// streamed back, then the call pauses delayMs, as the vendor's hub does.
func (c *conn) startEcho(m *signalr.Message) string {
	if len(m.StreamIDs) != 1 || len(m.Arguments) != 1 {
		return invokeError(m, fmt.Sprintf("expected 1 stream and 1 argument, got %d and %d",
			len(m.StreamIDs), len(m.Arguments)))
	}
	delayMs, ok := c.cd.integer(m.Arguments[0])
	if !ok || delayMs < 0 || delayMs > math.MaxInt32 {
		return invokeError(m, "the delay is not a non-negative integer")
	}
	s := &echoStream{invocationID: m.InvocationID, uploadID: m.StreamIDs[0], cancel: make(chan struct{})}
	if _, dup := c.uploads[s.uploadID]; dup {
		return invokeError(m, fmt.Sprintf("stream id %q is already in use", s.uploadID))
	}
	if errMsg := c.addStream(s); errMsg != "" {
		return invokeError(m, errMsg)
	}
	up := &upload{items: make(chan uploadItem, c.hub.Config.SendQueueSize)}
	if c.uploads == nil {
		c.uploads = make(map[string]*upload)
	}
	c.uploads[s.uploadID] = up
	c.hub.Conns.Add(1) // the connection's own count keeps this from racing Close
	go c.runEcho(s, up, time.Duration(delayMs)*time.Millisecond)
	return ""
}

func (c *conn) addStream(s *echoStream) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.streams[s.invocationID]; dup {
		return fmt.Sprintf("invocation id %q is already in use", s.invocationID)
	}
	if len(c.streams) >= maxStreamsPerConnection {
		return fmt.Sprintf("more than %d concurrent streams", maxStreamsPerConnection)
	}
	if c.streams == nil {
		c.streams = make(map[string]*echoStream)
	}
	c.streams[s.invocationID] = s
	return ""
}

func (c *conn) removeStream(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, id)
}

// uploadItem hands a client stream item to its stream. A stream whose
// buffer is full ends with an error rather than blocking the read loop.
func (c *conn) uploadItem(m *signalr.Message) {
	up := c.uploads[m.InvocationID]
	if up == nil {
		return // unknown or already ended stream: ignored like ASP.NET
	}
	m.Detach() // the item outlives the input it was read from
	select {
	case up.items <- uploadItem{raw: m.Item, at: c.hub.Now()}:
	default:
		up.errMsg = "The stream's item buffer is full."
		close(up.items)
		delete(c.uploads, m.InvocationID)
	}
}

// uploadDone ends a client stream (a Completion carrying its stream id).
func (c *conn) uploadDone(m *signalr.Message) {
	up := c.uploads[m.InvocationID]
	if up == nil {
		return
	}
	if m.HasError {
		up.errMsg = "The client's stream ended with an error: " + m.Error
	}
	close(up.items)
	delete(c.uploads, m.InvocationID)
}

func (c *conn) cancelStream(invocationID string) {
	c.mu.Lock()
	s := c.streams[invocationID]
	c.mu.Unlock()
	if s != nil {
		s.stop()
		delete(c.uploads, s.uploadID)
	}
}

func (c *conn) runEcho(s *echoStream, up *upload, pause time.Duration) {
	defer c.hub.Conns.Done()
	defer c.removeStream(s.invocationID)
	defer func() {
		if r := recover(); r != nil {
			c.hub.recovered(c, r)
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case item, ok := <-up.items:
			if !ok {
				c.sendQueued(completion(s.invocationID, nil, up.errMsg))
				return
			}
			if !c.echoItem(s, item, pause, timer) {
				return
			}
		case <-s.cancel:
			c.sendQueued(completion(s.invocationID, nil, ""))
			return
		case <-c.closing:
			return
		}
	}
}

// echoItem streams one item back after the slow-mode delay, then pauses;
// false means the stream ended meanwhile.
func (c *conn) echoItem(s *echoStream, item uploadItem, pause time.Duration, timer *time.Timer) bool {
	if wait := item.at + c.hub.DeliveryDelay() - c.hub.Now(); wait > 0 && !c.wait(s, time.Duration(wait), timer) {
		return false
	}
	c.sendQueued(&signalr.Message{Type: signalr.StreamItemType, InvocationID: s.invocationID, Item: item.raw})
	return pause <= 0 || c.wait(s, pause, timer)
}

func (c *conn) wait(s *echoStream, d time.Duration, timer *time.Timer) bool {
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-s.cancel:
		c.sendQueued(completion(s.invocationID, nil, ""))
		return false
	case <-c.closing:
		return false
	}
}
