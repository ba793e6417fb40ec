package clientconn

import (
	"context"
	"errors"
	"testing"
	"time"
)

func newState() *State {
	s := &State{}
	s.Init()
	return s
}

func TestFirstEndReasonWins(t *testing.T) {
	s := newState()
	first, second := errors.New("first"), errors.New("second")
	if s.Ended() || s.Err() != nil || !errors.Is(s.ClosedErr(), ErrClosed) {
		t.Fatalf("fresh state: ended %v, Err %v", s.Ended(), s.Err())
	}
	if !s.End(first) {
		t.Fatal("the first End reported it was not first")
	}
	if s.End(second) {
		t.Error("the second End reported it was first")
	}
	select {
	case <-s.Closing():
	default:
		t.Error("Closing is still open after End")
	}
	if !s.Ended() || s.Err() != first {
		t.Errorf("ended %v, Err %v, want the first reason", s.Ended(), s.Err())
	}
	if err := s.ClosedErr(); !errors.Is(err, ErrClosed) || !errors.Is(err, first) || errors.Is(err, second) {
		t.Errorf("ClosedErr = %v, want ErrClosed joined with the first reason", err)
	}
}

func TestCleanEndIsBareErrClosed(t *testing.T) {
	s := newState()
	s.End(nil)
	if err := s.ClosedErr(); err != ErrClosed {
		t.Errorf("ClosedErr = %v, want ErrClosed itself", err)
	}
}

func TestWaitDoneWaitsForFinish(t *testing.T) {
	s := newState()
	reason := errors.New("reason")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.WaitDone(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitDone before Finish = %v, want the context's deadline", err)
	}
	s.End(reason)
	s.Finish()
	if err := s.WaitDone(context.Background()); err != reason {
		t.Errorf("WaitDone after Finish = %v, want %v", err, reason)
	}
}

func TestEndsWithin(t *testing.T) {
	s := newState()
	start := time.Now()
	if s.EndsWithin(30 * time.Millisecond) {
		t.Fatal("EndsWithin reported an end that did not happen")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("EndsWithin gave up after %s, before 30ms", waited)
	}
	time.AfterFunc(10*time.Millisecond, func() { s.End(nil) })
	if !s.EndsWithin(5 * time.Second) {
		t.Error("EndsWithin missed the end")
	}
}
