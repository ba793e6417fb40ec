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
	name string
	roster[*conn]
	limiter *rateLimiter // nil when messages are not limited
}

func newSpace(name string, rate float64) *space {
	s := &space{name: name, roster: newRoster[*conn]()}
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

// roster is who is in one hub name, for the connections C of either
// protocol: connections by id, and the members of each group and of each
// user. A connection keeps the groups it joined itself (joined), so that
// leaving costs one lookup per group. Hub.mu guards both.
type roster[C comparable] struct {
	conns  map[string]C              // by connection id
	groups map[string]map[C]struct{} // group name → members
	users  map[string]map[C]struct{} // user id → connections
}

func newRoster[C comparable]() roster[C] {
	return roster[C]{conns: make(map[string]C), groups: make(map[string]map[C]struct{}), users: make(map[string]map[C]struct{})}
}

// enter makes c addressable by its id and its user ("" for none).
func (r roster[C]) enter(c C, id, user string) {
	r.conns[id] = c
	if user != "" {
		addMember(r.users, user, c)
	}
}

// exit removes c from the roster and every group it joined; false when c
// never entered.
func (r roster[C]) exit(c C, id, user string, joined map[string]struct{}) bool {
	if r.conns[id] != c {
		return false
	}
	delete(r.conns, id)
	if user != "" {
		removeMember(r.users, user, c)
	}
	for g := range joined {
		r.leave(c, g, joined)
	}
	return true
}

// join adds c to group, unless c is no longer in the roster (it is
// leaving).
func (r roster[C]) join(c C, id, group string, joined *map[string]struct{}) {
	if r.conns[id] != c {
		return
	}
	addMember(r.groups, group, c)
	if *joined == nil {
		*joined = make(map[string]struct{})
	}
	(*joined)[group] = struct{}{}
}

func (r roster[C]) leave(c C, group string, joined map[string]struct{}) {
	delete(joined, group)
	removeMember(r.groups, group, c)
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
