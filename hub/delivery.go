package hub

import (
	"container/heap"
	"slices"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/signalr"
)

type deliveryTarget int

const (
	toCaller deliveryTarget = iota
	toConnection
	toAll
	toGroup
	toUser
)

// delivery is a RecordLatency (or a REST send) on its way out. Receivers are
// resolved when it is sent, so in slow mode a broadcast reaches whoever is
// connected then.
type delivery struct {
	to       deliveryTarget
	space    *space
	caller   *conn    // nil for REST sends
	key      string   // connection id, group name or user id
	excluded []string // connection ids a REST send skips
	msg      signalr.Message
	run      func() // a Web PubSub delivery, instead of all of the above
}

// maxDelayed bounds slow-mode deliveries in flight across the hub.
const maxDelayed = 1 << 16

// deliver sends d now, or after the slow-mode delay without blocking the
// caller's read loop.
func (h *Hub) deliver(d delivery) {
	wait := h.deliveryDelay()
	if wait <= 0 {
		h.send(&d, true)
		return
	}
	if !h.delayed.push(h.now()+wait, d) {
		h.log.Warn().Msg("slow-mode queue full; message dropped")
	}
}

// send fans d out, encoding it once per hub protocol in use. With
// fromCaller (on the caller's read loop, not from the slow-mode queue) the
// caller's own copy goes to its outbox, which keeps it in order with the
// invocation's Completion; everyone else's goes to their send queue, which
// never blocks the sender.
func (h *Hub) send(d *delivery, fromCaller bool) {
	if d.run != nil {
		d.run()
		return
	}
	if d.to == toCaller && fromCaller {
		d.caller.reply(&d.msg) // no shared frame needed
		return
	}
	fo := fanout{msg: &d.msg, excluded: d.excluded}
	defer fo.release()
	own := d.caller
	if !fromCaller {
		own = nil
	}
	if d.to == toCaller {
		fo.sendTo(d.caller, false)
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	switch d.to {
	case toConnection:
		if c := d.space.conns[d.key]; c != nil {
			fo.sendTo(c, c == own)
		}
	case toAll:
		for _, c := range d.space.conns {
			fo.sendTo(c, c == own)
		}
	case toGroup:
		for c := range d.space.groups[d.key] {
			fo.sendTo(c, c == own)
		}
	case toUser:
		for c := range d.space.users[d.key] {
			fo.sendTo(c, c == own)
		}
	}
}

// fanout holds one encoded frame per protocol for a message going to many
// receivers; every receiver's queue gets the same bytes.
type fanout struct {
	msg      *signalr.Message
	excluded []string
	frames   [numCodecs]*frame
	failed   bool
}

func (fo *fanout) sendTo(c *conn, own bool) {
	if fo.failed || c.cd == nil || c.closed.Load() {
		return
	}
	if len(fo.excluded) > 0 && slices.Contains(fo.excluded, c.id) {
		return
	}
	f := fo.frames[c.cd.index]
	if f == nil {
		var err error
		if f, err = encodeFrame(c.cd, fo.msg); err != nil {
			c.log.Error().Err(err).Msg("cannot encode message")
			fo.failed = true
			return
		}
		fo.frames[c.cd.index] = f
	}
	if own {
		c.outbox.appendFrame(f.b) // on the caller's reader, which owns the outbox
	} else {
		c.enqueue(f)
	}
}

func (fo *fanout) release() {
	for _, f := range fo.frames {
		if f != nil {
			f.release()
		}
	}
}

// delayQueue holds slow-mode deliveries until they are due, in due order
// (and in arrival order among equal due times).
type delayQueue struct {
	mu    sync.Mutex
	items delayHeap
	seq   uint64
	wake  chan struct{}
	now   func() int64
	send  func(*delivery)
}

func newDelayQueue(now func() int64, send func(*delivery)) *delayQueue {
	return &delayQueue{wake: make(chan struct{}, 1), now: now, send: send}
}

func (q *delayQueue) push(due int64, d delivery) bool {
	q.mu.Lock()
	if len(q.items) >= maxDelayed {
		q.mu.Unlock()
		return false
	}
	q.seq++
	heap.Push(&q.items, delayed{due: due, seq: q.seq, d: d})
	first := q.items[0].seq == q.seq
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// run sends due deliveries until stop is closed; pending ones are dropped.
func (q *delayQueue) run(stop <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []delayed
	for {
		var next int64
		due, next = q.popDue(due[:0])
		for i := range due {
			q.send(&due[i].d)
			due[i] = delayed{}
		}
		if next > 0 {
			timer.Reset(time.Duration(next))
		} else {
			timer.Stop()
		}
		select {
		case <-stop:
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// popDue removes the due items and returns how long until the next one
// (0 when none is left).
func (q *delayQueue) popDue(dst []delayed) ([]delayed, int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for len(q.items) > 0 && q.items[0].due <= now {
		dst = append(dst, heap.Pop(&q.items).(delayed))
	}
	if len(q.items) == 0 {
		return dst, 0
	}
	return dst, max(q.items[0].due-now, 1)
}

func (q *delayQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

type delayed struct {
	due int64
	seq uint64
	d   delivery
}

type delayHeap []delayed

func (h delayHeap) Len() int { return len(h) }
func (h delayHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)   { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = delayed{}
	*h = old[:len(old)-1]
	return x
}
