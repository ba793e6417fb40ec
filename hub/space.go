package hub

import (
	"sync"
	"time"
)

// maxSpaces bounds the hub names the hub keeps state for. Only holders of
// the access key can name new ones, but a bug on their side must not grow
// memory without limit.
const maxSpaces = 1024

// space is one hub name's connections: a SignalR hub on Azure SignalR
// Service. Broadcasts, groups, users and connection ids never cross hub
// names. Its maps are guarded by Hub.mu.
type space struct {
	name    string
	conns   map[string]*conn              // by connection id
	groups  map[string]map[*conn]struct{} // group name → members
	users   map[string]map[*conn]struct{} // user id → connections
	limiter *rateLimiter                  // nil when messages are not limited
}

func newSpace(name string, rate float64) *space {
	s := &space{
		name:   name,
		conns:  make(map[string]*conn),
		groups: make(map[string]map[*conn]struct{}),
		users:  make(map[string]map[*conn]struct{}),
	}
	if rate > 0 {
		s.limiter = newRateLimiter(rate)
	}
	return s
}

// spaceNamed returns the state of hub name, creating it unless the hub
// already keeps maxSpaces of them.
func (h *Hub) spaceNamed(name string) (*space, bool) {
	h.mu.RLock()
	s := h.spaces[name]
	h.mu.RUnlock()
	if s != nil {
		return s, true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s = h.spaces[name]; s != nil {
		return s, true
	}
	if len(h.spaces) >= maxSpaces {
		return nil, false
	}
	s = newSpace(name, h.opts.MessageRateLimit)
	h.spaces[name] = s
	return s, true
}

// addMember and removeMember keep a set-valued index; empty sets go.
func addMember[C comparable](index map[string]map[C]struct{}, key string, c C) {
	members := index[key]
	if members == nil {
		members = make(map[C]struct{})
		index[key] = members
	}
	members[c] = struct{}{}
}

func removeMember[C comparable](index map[string]map[C]struct{}, key string, c C) {
	members := index[key]
	delete(members, c)
	if len(members) == 0 {
		delete(index, key)
	}
}

// rateLimiter is a token bucket holding at most one second of messages
// (and at least one).
type rateLimiter struct {
	mu     sync.Mutex
	rate   float64 // tokens per nanosecond
	burst  float64
	tokens float64
	last   int64 // hub clock of the last refill; 0 before the first take
}

func newRateLimiter(perSecond float64) *rateLimiter {
	burst := max(perSecond, 1)
	return &rateLimiter{rate: perSecond / float64(time.Second), burst: burst, tokens: burst}
}

// allow takes one token at hub time now, or reports that none is left.
func (l *rateLimiter) allow(now int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != 0 && now > l.last {
		l.tokens = min(l.burst, l.tokens+float64(now-l.last)*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}
