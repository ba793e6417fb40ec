package webpubsubclient

import (
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// sequenceAckBatch is how far the largest sequenceId may run ahead of the
// last one acknowledged before an ack goes out at once rather than at the
// next interval, as the official client does; the service holds at most
// 1000 unacknowledged messages per connection.
const sequenceAckBatch = 300

// sequence tracks the reliable protocol's sequence ids. The reader
// records arrivals; a timer sends the cumulative sequenceAck, so the
// reader never waits on a write.
type sequence struct {
	largest  atomic.Uint64 // written by the reader only
	acked    atomic.Uint64 // the last id a sequenceAck carried
	dirty    atomic.Bool   // something arrived since the last ack
	urgent   atomic.Bool   // an immediate ack is scheduled
	interval time.Duration
	timer    *time.Timer // set before the reader starts
}

func (s *sequence) start(interval time.Duration, send func()) {
	s.interval = interval
	s.timer = time.AfterFunc(time.Hour, send)
	s.timer.Stop()
}

// received notes a message's id on the read goroutine. Duplicates count
// as arrivals too: the service learns that they came.
func (s *sequence) received(id uint64) {
	if id > s.largest.Load() {
		s.largest.Store(id)
	}
	if s.largest.Load()-s.acked.Load() > sequenceAckBatch {
		s.dirty.Store(true)
		if !s.urgent.Swap(true) {
			s.timer.Reset(0)
		}
		return
	}
	if !s.dirty.Swap(true) {
		s.timer.Reset(s.interval)
	}
}

// stop runs on the read goroutine once the connection ended.
func (s *sequence) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// sendSequenceAck acknowledges everything up to the largest id received.
// A failed write is not retried here: either the connection ended, or the
// next arrival schedules another ack.
func (c *Conn) sendSequenceAck() {
	c.seq.urgent.Store(false)
	c.seq.dirty.Store(false)
	f := webpubsub.Frame{Kind: webpubsub.KindSequenceAck, SequenceID: c.seq.largest.Load()}
	if c.writeInternal(&f) == nil {
		c.seq.acked.Store(f.SequenceID)
	}
}
