package scenarios

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Backoff of a throttle pause without Retry-After: full jitter below a
// ceiling that doubles with every throttle in a row.
const (
	pauseBase = time.Second
	pauseCap  = 30 * time.Second
)

// Pause holds a target's sends while it throttles hubprobe: a canary must
// never hammer a throttled service. After a 429 or a throttling close, no
// send goes out until the service's Retry-After has passed (or, without
// one, a jittered exponential backoff); a send that falls due meanwhile is
// counted as throttled and never sent later. One Pause is shared by every
// scenario of a target.
type Pause struct {
	streak atomic.Int32 // throttles since the last accepted send

	mu     sync.Mutex
	until  time.Time
	reason string
}

// Throttle starts or extends the pause after the service throttled a send
// for reason, asking for retryAfter (0 when it did not say).
func (p *Pause) Throttle(reason string, retryAfter time.Duration, now time.Time) {
	streak := p.streak.Add(1)
	wait := retryAfter
	if wait <= 0 {
		ceiling := min(pauseCap, pauseBase<<min(streak-1, 5))
		wait = ceiling/2 + time.Duration(rand.Int64N(int64(ceiling/2)+1))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := now.Add(wait); until.After(p.until) {
		p.until, p.reason = until, reason
	}
}

// Accepted records a send the service took, so the next throttle's backoff
// starts from its base again.
func (p *Pause) Accepted() {
	if p.streak.Load() != 0 {
		p.streak.Store(0)
	}
}

// Holding reports whether sends are paused at now, and for which reason.
func (p *Pause) Holding(now time.Time) (reason string, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Before(p.until) {
		return p.reason, true
	}
	return "", false
}

// Pauses keeps one Pause per target, across runs and reloads, so every
// scenario of a target holds its sends while that target throttles.
type Pauses struct {
	mu sync.Mutex
	m  map[string]*Pause
}

// For returns target's Pause, made on first use.
func (ps *Pauses) For(target string) *Pause {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[string]*Pause{}
	}
	p := ps.m[target]
	if p == nil {
		p = &Pause{}
		ps.m[target] = p
	}
	return p
}
