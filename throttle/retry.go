package throttle

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads a Retry-After header: delay-seconds or an HTTP-date
// (RFC 9110 section 10.2.3). A date in the past means no wait; a number of
// seconds too large for a time.Duration is the longest one. ok is false
// when the header is absent or unreadable.
func ParseRetryAfter(h string, now time.Time) (d time.Duration, ok bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if strings.Trim(h, "0123456789") == "" {
		secs, err := strconv.ParseInt(h, 10, 64)
		if err != nil || secs > int64(math.MaxInt64/time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Backoff is "full jitter" backoff for a caller the service refused
// without saying when to come back: a uniformly random wait below a
// ceiling that doubles with every refusal in a row, from Base up to Cap,
// and never shorter than Min.
type Backoff struct {
	Base, Cap, Min time.Duration
}

// Wait returns the wait before retry number retry (1 for the first):
// jitter, clamped to [0, 1], times min(Cap, Base*2^(retry-1)), at least Min.
func (b Backoff) Wait(retry int, jitter float64) time.Duration {
	ceiling := b.Cap
	if shift := retry - 1; shift < 16 {
		ceiling = min(b.Cap, b.Base<<max(shift, 0))
	}
	if math.IsNaN(jitter) || jitter < 0 {
		jitter = 0
	}
	jitter = min(jitter, 1)
	return max(b.Min, time.Duration(jitter*float64(ceiling)))
}
