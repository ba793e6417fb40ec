package azure

import (
	"context"
	"net/http"
	"time"

	"github.com/hubprobe/hubprobe/throttle"
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
	return throttle.Backoff{Base: restBackoffBase, Cap: restBackoffCap, Min: restMinWait}.Wait(retry, jitter)
}
