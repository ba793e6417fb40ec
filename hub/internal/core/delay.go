package core

import (
	"container/heap"
	"sync"
	"time"
)

// To says who a message goes to; the key beside it names the connection,
// group or user.
type To uint8

// The receivers of a message.
const (
	ToCaller     To = iota // the connection that asked (SignalR's Echo)
	ToConnection           // one connection, by id
	ToAll                  // every connection of the hub name
	ToGroup                // the members of a group
	ToUser                 // the connections of a user
)

// maxDelayed bounds the slow-mode deliveries one protocol has in flight.
const maxDelayed = 1 << 16

// DelayQueue holds one protocol's slow-mode deliveries T until they are
// due, in due order (and in arrival order among equal due times), and
// sends them from a goroutine of the host's.
type DelayQueue[T any] struct {
	host  *Host
	send  func(*T)
	mu    sync.Mutex
	items delayHeap[T]
	seq   uint64
	wake  chan struct{}
}

// NewDelayQueue sends each delivery with send once it is due, until the
// host closes; pending ones are dropped then.
func NewDelayQueue[T any](h *Host, send func(*T)) *DelayQueue[T] {
	q := &DelayQueue[T]{host: h, send: send, wake: make(chan struct{}, 1)}
	h.Go(q.run)
	return q
}

// Defer queues d to be sent wait nanoseconds of hub time from now; a full
// queue drops it.
func (q *DelayQueue[T]) Defer(wait int64, d T) {
	if !q.push(q.host.Now()+wait, d) {
		q.host.Log.Warn().Msg("slow-mode queue full; message dropped")
	}
}

func (q *DelayQueue[T]) push(due int64, d T) bool {
	q.mu.Lock()
	if len(q.items) >= maxDelayed {
		q.mu.Unlock()
		return false
	}
	q.seq++
	heap.Push(&q.items, delayed[T]{due: due, seq: q.seq, d: d})
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

// run sends due deliveries until stop is closed.
func (q *DelayQueue[T]) run(stop <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []delayed[T]
	for {
		var next int64
		due, next = q.popDue(due[:0])
		for i := range due {
			q.sendRecovering(&due[i].d)
			due[i] = delayed[T]{}
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

// sendRecovering survives a panic in any one delivery.
func (q *DelayQueue[T]) sendRecovering(d *T) {
	defer func() {
		if r := recover(); r != nil {
			q.host.NotePanic(q.host.Log, r)
		}
	}()
	q.send(d)
}

// popDue removes the due items and returns how long until the next one
// (0 when none is left).
func (q *DelayQueue[T]) popDue(dst []delayed[T]) ([]delayed[T], int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.host.Now()
	for len(q.items) > 0 && q.items[0].due <= now {
		dst = append(dst, heap.Pop(&q.items).(delayed[T]))
	}
	if len(q.items) == 0 {
		return dst, 0
	}
	return dst, max(q.items[0].due-now, 1)
}

// Len is how many deliveries wait.
func (q *DelayQueue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

type delayed[T any] struct {
	due int64
	seq uint64
	d   T
}

type delayHeap[T any] []delayed[T]

func (h delayHeap[T]) Len() int { return len(h) }
func (h delayHeap[T]) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h delayHeap[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap[T]) Push(x any)   { *h = append(*h, x.(delayed[T])) }
func (h *delayHeap[T]) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = delayed[T]{}
	*h = old[:len(old)-1]
	return x
}
