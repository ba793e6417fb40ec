// Package sleep is how hubprobe waits on the clock: for a while, or until
// an instant, unless a context ends first. Every such wait goes through
// here, so none of them can outlive the run, request or process that
// asked for it.
package sleep

import (
	"context"
	"time"
)

// For waits d. When ctx ends first it returns ctx.Err() at once. A d of
// zero or less does not wait, but still reports a ctx that has ended, so
// a loop of waits stops even when it has fallen behind.
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Until waits until t, as For does.
func Until(ctx context.Context, t time.Time) error { return For(ctx, time.Until(t)) }
