package clientconn

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// closeRecorder plays a connection's transport for CloseInOrder: it keeps
// the steps taken, and its read goroutine finishes once the transport is
// closed, or when the server answers the shutdown if answer is set.
type closeRecorder struct {
	s        *State
	answer   bool
	mu       sync.Mutex
	steps    []string
	deadline time.Time
	finish   sync.Once
}

func (r *closeRecorder) note(step string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, step)
}

func (r *closeRecorder) closeSteps(last func(context.Context)) CloseSteps {
	return CloseSteps{
		Last: last,
		Shutdown: func(deadline time.Time) {
			r.note("shutdown")
			r.deadline = deadline
			if r.answer {
				go r.finish.Do(r.s.Finish)
			}
		},
		CloseTransport: func() {
			r.note("close")
			r.finish.Do(r.s.Finish)
		},
	}
}

func (r *closeRecorder) taken() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.steps, ",")
}

func TestCloseInOrderWritesLastThenShutsDown(t *testing.T) {
	r := &closeRecorder{s: newState(), answer: true}
	var turnOpen bool
	last := func(ctx context.Context) {
		r.note("last")
		turnOpen = r.s.AcquireWrite(ctx) == nil
		if turnOpen {
			r.s.ReleaseWrite()
		}
	}
	began := time.Now()
	if err := r.s.CloseInOrder(context.Background(), r.closeSteps(last)); err != nil {
		t.Fatalf("CloseInOrder = %v, want nil", err)
	}
	if got := r.taken(); got != "last,shutdown,close" || !turnOpen {
		t.Errorf("steps %q, write turn open for the last message %v", got, turnOpen)
	}
	ended := time.Now()
	if r.deadline.Before(began.Add(CloseWait)) || r.deadline.After(ended.Add(CloseWait)) {
		t.Errorf("shutdown deadline %s after the start, want CloseWait", r.deadline.Sub(began))
	}
	if waited := ended.Sub(began); waited >= CloseWait/2 {
		t.Errorf("an answered close took %s", waited)
	}
	if !r.s.Ended() || r.s.Err() != nil {
		t.Errorf("ended %v with %v, want a clean end", r.s.Ended(), r.s.Err())
	}
}

func TestCloseInOrderGivesUpOnASilentServer(t *testing.T) {
	r := &closeRecorder{s: newState()}
	began := time.Now()
	if err := r.s.CloseInOrder(context.Background(), r.closeSteps(nil)); err != nil {
		t.Fatalf("CloseInOrder = %v, want nil", err)
	}
	if waited := time.Since(began); waited < CloseWait || waited > 3*CloseWait {
		t.Errorf("waited %s for a server that never answers, want CloseWait", waited)
	}
	if got := r.taken(); got != "shutdown,close" {
		t.Errorf("steps %q", got)
	}
}

func TestCloseInOrderReportsAnEarlierEnd(t *testing.T) {
	reason := errors.New("the server went away")
	r := &closeRecorder{s: newState()}
	failing := func(context.Context) { r.note("last"); r.s.End(reason) } // the last write failed
	if err := r.s.CloseInOrder(context.Background(), r.closeSteps(failing)); err != reason {
		t.Errorf("CloseInOrder after the last write ended it = %v, want %v", err, reason)
	}
	if got := r.taken(); got != "last,close" {
		t.Errorf("steps %q, want no shutdown of an ended connection", got)
	}

	ended := &closeRecorder{s: newState()}
	ended.s.End(reason)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := ended.s.CloseInOrder(ctx, ended.closeSteps(nil)); !errors.Is(err, context.DeadlineExceeded) || ended.taken() != "" {
		t.Errorf("CloseInOrder before the reader finished = %v after steps %q, want ctx's error and no steps", err, ended.taken())
	}
	ended.s.Finish()
	if err := ended.s.CloseInOrder(context.Background(), ended.closeSteps(nil)); err != reason {
		t.Errorf("CloseInOrder of an ended connection = %v, want %v", err, reason)
	}
}
