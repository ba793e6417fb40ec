package core

import (
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/throttle"
)

// RateLimiter is a token bucket holding at most one second of messages
// (and at least one).
type RateLimiter struct {
	mu     sync.Mutex
	rate   float64 // tokens per nanosecond
	burst  float64
	tokens float64
	last   int64 // hub clock of the last refill; 0 before the first take
}

// NewRateLimiter lets perSecond messages through each second.
func NewRateLimiter(perSecond float64) *RateLimiter {
	burst := max(perSecond, 1)
	return &RateLimiter{rate: perSecond / float64(time.Second), burst: burst, tokens: burst}
}

// allow takes one token at hub time now, or reports that none is left.
func (l *RateLimiter) allow(now int64) bool {
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

// WithinRate takes one message from a hub name's rate limit l (nil for
// none); a message over the limit is counted as throttled. The check for
// no limit stays inline on the per-message path.
func (h *Host) WithinRate(l *RateLimiter) bool { return l == nil || h.take(l) }

func (h *Host) take(l *RateLimiter) bool {
	if l.allow(h.Now()) {
		return true
	}
	h.Metrics.Throttled.WithLabelValues(throttle.MessageLimit).Inc()
	return false
}
