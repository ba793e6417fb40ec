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

func TestGuardWriteAbortsABlockedWrite(t *testing.T) {
	client, server := net.Pipe() // nobody reads server: a write blocks
	defer server.Close()
	sentinel := errors.New("aborted")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	guard := GuardWrite(ctx, func() { client.Close() })
	_, writeErr := client.Write([]byte("x"))
	err := guard.Release(ctx, sentinel)
	if !errors.Is(err, sentinel) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Release = %v, want the sentinel with the context's deadline", err)
	}
	if !errors.Is(writeErr, io.ErrClosedPipe) {
		t.Errorf("the write was not cut off: %v", writeErr)
	}
}

func TestGuardWriteLeavesAFinishedWriteAlone(t *testing.T) {
	var aborted atomic.Bool
	abort := func() { aborted.Store(true) }
	ctx, cancel := context.WithCancel(context.Background())
	guard := GuardWrite(ctx, abort)
	if err := guard.Release(ctx, errors.New("aborted")); err != nil {
		t.Errorf("Release = %v", err)
	}
	cancel()
	time.Sleep(10 * time.Millisecond)
	if aborted.Load() {
		t.Error("abort ran after Release")
	}
	if err := GuardWrite(context.Background(), abort).Release(context.Background(), errors.New("x")); err != nil || aborted.Load() {
		t.Errorf("a context that cannot end: Release %v, aborted %v", err, aborted.Load())
	}
}
