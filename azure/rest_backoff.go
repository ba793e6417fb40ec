package azure

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff after HTTP 429 without a usable Retry-After: "full jitter", a
// uniformly random wait below a ceiling that doubles per retry.
const (
	restBackoffBase = 100 * time.Millisecond
	restBackoffCap  = 5 * time.Second
	// restMinWait keeps an unlucky draw (or Retry-After: 0) from turning
	// the retries into a burst.
	restMinWait = 10 * time.Millisecond
)

// retryWait decides whether a call that got rerr on its attempt-th request
// is retried, and after how long. Only 429 is retried. The wait is never
// shorter than the server's Retry-After; a Retry-After beyond MaxRetryWait,
// or a wait that would outlast ctx's deadline, ends the call at once
// rather than sleeping for nothing.
func (t *restTransport) retryWait(ctx context.Context, rerr *RESTError, attempt int) (time.Duration, bool) {
	if rerr.StatusCode != http.StatusTooManyRequests || attempt > t.opts.MaxRetries {
		return 0, false
	}
	if rerr.RetryAfter > t.opts.MaxRetryWait {
		return 0, false
	}
	wait := max(rerr.RetryAfter, restBackoff(attempt, t.opts.Jitter()))
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return 0, false
	}
	return wait, true
}

// restBackoff returns the wait before retry number retry (1 for the first):
// jitter, clamped to [0, 1], times min(cap, base*2^(retry-1)).
func restBackoff(retry int, jitter float64) time.Duration {
	ceiling := restBackoffCap
	if shift := retry - 1; shift < 16 {
		ceiling = min(restBackoffCap, restBackoffBase<<max(shift, 0))
	}
	if math.IsNaN(jitter) || jitter < 0 {
		jitter = 0
	}
	jitter = min(jitter, 1)
	return max(restMinWait, time.Duration(jitter*float64(ceiling)))
}

// restParseRetryAfter reads a Retry-After header: delay-seconds or an
// HTTP-date (RFC 9110 section 10.2.3). A date in the past means no wait.
// ok is false when the header is absent or unreadable.
func restParseRetryAfter(h string, now time.Time) (d time.Duration, ok bool) {
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

// restSleep waits for d or until ctx ends.
func restSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
