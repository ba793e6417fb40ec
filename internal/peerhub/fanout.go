package peerhub

import (
	"slices"
	"sync"
	"sync/atomic"
)

// fanout keeps what a broadcast plan needs: the connections to deliver to,
// one at a time, and the deliveries numbered across the server.
type fanout struct {
	plan       atomic.Pointer[func(n int64) bool]
	deliveries atomic.Int64

	mu    sync.Mutex
	conns []string // in order of connection
}

func (f *fanout) connected(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns = append(f.conns, id)
}

func (f *fanout) disconnected(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns = slices.DeleteFunc(f.conns, func(c string) bool { return c == id })
}

func (f *fanout) connections() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.conns)
}

// SetBroadcastPlan makes drop decide every delivery of a Broadcast, by its
// number across the server from 0: true drops it, to rehearse a hub that
// loses part of a fan-out. Without a plan a broadcast goes to all at once.
func (s *Server) SetBroadcastPlan(drop func(n int64) bool) { s.fanout.plan.Store(&drop) }

// OnDisconnected forgets the connection's id.
func (h *Hub) OnDisconnected(id string) { h.server.fanout.disconnected(id) }

// broadcast sends p to every connection: to all at once, or under a plan
// one delivery at a time, each numbered and dropped as the plan says.
func (h *Hub) broadcast(p map[string]any) {
	f := &h.server.fanout
	drop := f.plan.Load()
	if drop == nil {
		h.Clients().All().Send("RecordLatency", p)
		return
	}
	for _, id := range f.connections() {
		if !(*drop)(f.deliveries.Add(1) - 1) {
			h.Clients().Client(id).Send("RecordLatency", p)
		}
	}
}
