package clientconn

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

func TestWriteTurnGivesUpOnContext(t *testing.T) {
	s := newState()
	if err := s.AcquireWrite(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.AcquireWrite(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second writer: %v, want the context's deadline", err)
	}
	s.ReleaseWrite()
	if err := s.AcquireWrite(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a writer whose context already ended: %v, want the context's deadline", err)
	}
	if err := s.AcquireWrite(context.Background()); err != nil {
		t.Errorf("the turn was not handed back: %v", err)
	}
}

func TestWriteTurnGivesUpOnEnd(t *testing.T) {
	s := newState()
	reason := errors.New("reason")
	if err := s.AcquireWrite(context.Background()); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- s.AcquireWrite(context.Background()) }()
	time.Sleep(10 * time.Millisecond)
	s.End(reason)
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrClosed) || !errors.Is(err, reason) {
			t.Errorf("waiting writer: %v, want ErrClosed with the reason", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting writer missed the end")
	}
	s.ReleaseWrite()
	if err := s.AcquireWrite(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("writer after the end: %v, want ErrClosed", err)
	}
}

func TestWriteGuardAbortsABlockedWrite(t *testing.T) {
	client, server := net.Pipe() // nobody reads server: a write blocks
	defer server.Close()
	sentinel := errors.New("aborted")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var g WriteGuard
	g.Init(func() { // as a connection's end does: close, and stop the guard
		client.Close()
		g.Stop()
	})
	mustBegin(t, &g, ctx)
	_, writeErr := client.Write([]byte("x"))
	err := g.End(ctx, sentinel)
	if !errors.Is(err, sentinel) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("End = %v, want the sentinel with the context's deadline", err)
	}
	if !errors.Is(writeErr, io.ErrClosedPipe) {
		t.Errorf("the write was not cut off: %v", writeErr)
	}
}

// A write still in progress when its context ends, but finishing soon
// after, is left whole: only a write the server makes no room for is cut
// off.
func TestWriteGuardLetsAWriteInProgressFinish(t *testing.T) {
	var aborted atomic.Bool
	var g WriteGuard
	g.Init(func() { aborted.Store(true) })
	ctx, cancel := context.WithCancel(context.Background())
	mustBegin(t, &g, ctx)
	cancel()
	time.Sleep(writeGrace / 10) // the write goes on a while after the end
	if err := g.End(ctx, errors.New("aborted")); err != nil || aborted.Load() {
		t.Errorf("End = %v, aborted %v; want nil and no abort", err, aborted.Load())
	}
	time.Sleep(writeGrace)
	if aborted.Load() {
		t.Error("abort ran after the write finished")
	}
}

func TestWriteGuardLeavesAFinishedWriteAlone(t *testing.T) {
	var aborted atomic.Bool
	var g WriteGuard
	g.Init(func() { aborted.Store(true) })
	ctx, cancel := context.WithCancel(context.Background())
	mustBegin(t, &g, ctx)
	if err := g.End(ctx, errors.New("aborted")); err != nil {
		t.Errorf("End = %v", err)
	}
	cancel()
	time.Sleep(10 * time.Millisecond)
	if aborted.Load() {
		t.Error("abort ran after End")
	}
	mustBegin(t, &g, context.Background())
	if err := g.End(context.Background(), errors.New("x")); err != nil || aborted.Load() {
		t.Errorf("a context that cannot end: End %v, aborted %v", err, aborted.Load())
	}
}

// countingCtx counts the guard's registrations with it and their removals.
type countingCtx struct {
	context.Context
	registered, unregistered atomic.Int32
}

// Value hides the cancelable context beneath, so that context.AfterFunc
// registers through AfterFunc below rather than with it directly.
func (c *countingCtx) Value(any) any { return nil }

func (c *countingCtx) AfterFunc(f func()) func() bool {
	c.registered.Add(1)
	stop := context.AfterFunc(c.Context, f)
	return func() bool {
		c.unregistered.Add(1)
		return stop()
	}
}

func newCountingCtx(t *testing.T) (*countingCtx, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &countingCtx{Context: ctx}, cancel
}

// A run's sends share its context: it has one registration, whatever the
// number of connections writing under it and of their writes, and a write
// allocates nothing for its guard. Its end cuts off only the writes in
// progress, and the last guard to stop removes the registration.
func TestWriteGuardsUnderOneContextRegisterOnce(t *testing.T) {
	var aborts [3]atomic.Int32
	guards := make([]WriteGuard, 3)
	for i := range guards {
		guards[i].Init(func() { aborts[i].Add(1) })
	}
	run, cancel := newCountingCtx(t)
	aborted := errors.New("aborted")
	allocs := testing.AllocsPerRun(100, func() {
		for i := range guards {
			mustBegin(t, &guards[i], run)
			if err := guards[i].End(run, aborted); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 || run.registered.Load() != 1 {
		t.Errorf("101 writes on each of 3 connections: %.1f allocations each, %d registrations; want 0, 1",
			allocs, run.registered.Load())
	}
	mustBegin(t, &guards[1], run) // mid-write when the run ends
	cancel()
	waitFor(t, func() bool { return aborts[1].Load() == 1 })
	if err := guards[1].End(run, aborted); !errors.Is(err, aborted) {
		t.Errorf("End of the write cut off = %v, want the sentinel", err)
	}
	time.Sleep(10 * time.Millisecond)
	if aborts[0].Load() != 0 || aborts[2].Load() != 0 {
		t.Errorf("aborts of the idle connections: %d and %d, want none", aborts[0].Load(), aborts[2].Load())
	}
}

func TestWriteGuardStopRemovesTheLastRegistration(t *testing.T) {
	var a, b WriteGuard
	a.Init(func() { t.Error("abort ran") })
	b.Init(func() { t.Error("abort ran") })
	ctx, _ := newCountingCtx(t)
	for _, g := range []*WriteGuard{&a, &b} {
		mustBegin(t, g, ctx)
		_ = g.End(ctx, errors.New("aborted"))
	}
	a.Stop()
	if ctx.unregistered.Load() != 0 {
		t.Fatal("the registration went while a connection still wrote under it")
	}
	b.Stop()
	mustBegin(t, &b, ctx)
	_ = b.End(ctx, errors.New("aborted"))
	if ctx.registered.Load() != 1 || ctx.unregistered.Load() != 1 {
		t.Errorf("%d registrations, %d removed; want 1 and 1, none after Stop", ctx.registered.Load(), ctx.unregistered.Load())
	}
}

// A write under another context moves the registration: the first
// context's end no longer cuts anything off, the second's does.
func TestWriteGuardFollowsTheWritesContext(t *testing.T) {
	var aborts atomic.Int32
	var g WriteGuard
	g.Init(func() { aborts.Add(1) })
	first, cancelFirst := newCountingCtx(t)
	second, cancelSecond := newCountingCtx(t)
	mustBegin(t, &g, first)
	if err := g.End(first, errors.New("aborted")); err != nil {
		t.Fatal(err)
	}
	mustBegin(t, &g, second)
	cancelFirst()
	time.Sleep(10 * time.Millisecond)
	if aborts.Load() != 0 || first.unregistered.Load() != 1 || second.registered.Load() != 1 {
		t.Fatalf("after the first context ended: %d aborts, first removed %d times, second registered %d times; want 0, 1, 1",
			aborts.Load(), first.unregistered.Load(), second.registered.Load())
	}
	cancelSecond()
	waitFor(t, func() bool { return aborts.Load() == 1 })
	if err := g.End(second, errors.New("aborted")); !errors.Is(err, context.Canceled) {
		t.Errorf("End after the second context ended mid-write = %v, want its error", err)
	}
}

// A write under a context that ended between writes, while the guard was
// idle, does not start: Begin says so and the connection stays whole.
func TestWriteGuardRefusesAWriteUnderAnEndedContext(t *testing.T) {
	var g WriteGuard
	g.Init(func() { t.Error("abort ran") })
	ctx, cancel := newCountingCtx(t)
	mustBegin(t, &g, ctx)
	_ = g.End(ctx, errors.New("aborted"))
	cancel()
	time.Sleep(10 * time.Millisecond)
	if err := g.Begin(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Begin under an ended context = %v, want its error", err)
	}
	fresh, cancelFresh := context.WithCancel(context.Background())
	cancelFresh()
	if err := g.Begin(fresh); !errors.Is(err, context.Canceled) {
		t.Fatalf("Begin under a context ended before its first write = %v, want its error", err)
	}
	time.Sleep(10 * time.Millisecond)
}

func mustBegin(t *testing.T, g *WriteGuard, ctx context.Context) {
	t.Helper()
	if err := g.Begin(ctx); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
