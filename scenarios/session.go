package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/internal/pacing"
)

// Session is a run's connections, open and prepared, for a Driver to send
// over: RunAt paces them once, a capacity search (package capacity) step
// after step with ever more of them sending.
type Session struct {
	rn   *Runner
	run  *Run
	kind Kind
}

// Driver is what a run does once its connections are open and prepared.
// Its error fails the run.
type Driver func(ctx context.Context, s *Session) error

// Drive runs the scenario scheduled at at as RunAt does: it connects every
// client, prepares the kind, closes everything it opened and reports the
// run to the runner's recorder, with drive in place of RunAt's one sending
// window. The run is cfg (the runner's scenario as drive needs it) and
// records what it measures into rec.
func (rn *Runner) Drive(ctx context.Context, at time.Time, cfg config.Scenario, rec Recorder, drive Driver) Result {
	res := Result{Scenario: rn.Scenario.Name, Target: rn.Scenario.Target, Kind: rn.Scenario.Kind, Start: time.Now()}
	factory, err := rn.kindFactory()
	if err != nil {
		return rn.finish(res, nil, err)
	}
	kind := factory(cfg)
	s := &Session{rn: rn, run: rn.newRun(cfg, rec, kind, at), kind: kind}
	return rn.finish(res, s.run, s.open(ctx, drive))
}

// open connects and prepares the run, drives it and closes it.
func (s *Session) open(ctx context.Context, drive Driver) error {
	defer s.rn.closeAll(ctx, s.run)
	if err := s.rn.connectAll(ctx, s.run); err != nil {
		return err
	}
	s.run.routes = make([]route, len(s.run.Clients))
	if err := s.kind.Prepare(ctx, s.run); err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	return drive(ctx, s)
}

// ID names the run, the same on every shard (see Run.ID).
func (s *Session) ID() string { return s.run.ID }

// Connections is how many connections the run has open on this shard.
func (s *Session) Connections() int { return len(s.run.Clients) }

// Sent counts the run's messages the hub took so far.
func (s *Session) Sent() int64 { return s.run.tracker.sent.Load() }

// Expected counts the deliveries the run's sent messages expect so far.
func (s *Session) Expected() int64 { return s.run.tracker.expected.Load() }

// Pace calls send on the open-loop schedule of senders connections, the
// first ones, each sending every send_interval for duration (see pacing.Pacer),
// and counts the window in the run's figures. It returns how many sends
// the schedule held and how many of them it made.
func (s *Session) Pace(ctx context.Context, senders int, duration time.Duration, send func(sender int, lag time.Duration)) (scheduled, made int64) {
	interval := s.rn.Scenario.SendInterval
	p := pacing.Pacer{Senders: senders, Interval: interval, Duration: duration, LateLimit: s.rn.MaxSendLag(), Slot: pacing.SendSlot(interval, senders)}
	began := time.Now()
	made = p.Run(ctx, send)
	s.run.tracker.paced(p.Total(), made, time.Since(began))
	return p.Total(), made
}

// Send sends sender's next message, lag late for its schedule, in buf. A
// message the hub refused for throttling is counted as throttled, not as
// sent, and pauses the target (see Pause): refused is then true and err
// the refusal.
func (s *Session) Send(ctx context.Context, sender int, lag time.Duration, buf *[]byte) (refused bool, err error) {
	err = s.run.sendOne(ctx, s.kind, sender, lag, buf)
	return new(refusedSends).add(s.run, s.rn.pause(), err), err
}

// Ended reports whether connection i has ended, and whether the hub ended
// it for throttling.
func (s *Session) Ended(i int) (ended, throttled bool) {
	c := s.run.Clients[i]
	select {
	case <-c.done():
		_, throttled = throttledBy(c.err())
		return true, throttled
	default:
		return false, false
	}
}

// Drain waits, at most the loss timeout, for the deliveries still in
// flight. What has not arrived by then is lost, whatever comes after.
func (s *Session) Drain(ctx context.Context) {
	s.rn.drain(ctx, s.run)
	s.run.tracker.closed.Store(true)
}
