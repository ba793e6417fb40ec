package scenarios

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"
)

// heldWindow is one report of a held scenario: what its connections
// measured from start to end, named and reported as a run of its own.
// Every message sent in the window carries the window's marker, so a
// delivery that arrives after the window ended still counts for it until
// its loss timeout has passed.
type heldWindow struct {
	id         string
	start, end time.Time
	slots      int // connections the window's ledger holds
	tracker    *tracker
	payloads   *payloadBuilder

	mu   sync.Mutex
	away map[uint64]struct{} // messages that fell due while their connection was away
	late int64               // of them, those that arrived
}

// newWindow opens the window of the held scenario that starts at start,
// for slots connections.
func (h *Held) newWindow(start time.Time, slots int) *heldWindow {
	rn := h.runner()
	w := &heldWindow{id: runID(rn.Scenario.Name, start), start: start, slots: slots}
	w.end = start.Add(rn.Scenario.Held.ReportInterval)
	w.tracker = newTracker(rn.Recorder, slots)
	w.tracker.runID, w.tracker.first = w.id, rn.Shard.First(rn.Scenario.Connections)
	w.payloads = newPayloadBuilder(runMarker(w.id, rn.Shard), rn.Scenario.MessageSize)
	w.away = map[uint64]struct{}{}
	return w
}

// queued notes message id as one that fell due while its connection was
// away.
func (w *heldWindow) queued(id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.away[id] = struct{}{}
}

// arrived counts message id, delivered for the first time, as late when
// it fell due while its connection was away.
func (w *heldWindow) arrived(id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.away[id]; ok {
		w.late++
	}
}

// awayFigures are the away messages, those that arrived and, by their
// identity in the ledger, those that never did. Each connection echoes to
// itself, so its messages' receiver is their sender.
func (w *heldWindow) awayFigures() (away, late, lost int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.away {
		sender, seq := ledger.SplitMessageID(id)
		if !w.tracker.ids.Seen(sender, id, uint64(seq)) {
			lost++
		}
	}
	return int64(len(w.away)), w.late, lost
}

// deliver counts payload at connection i when it is a message of w; it
// reports whether it was.
func (w *heldWindow) deliver(i int, payload json.RawMessage) bool {
	us, id, ok := w.payloads.Parse(payload)
	if !ok {
		return false
	}
	_, seq := ledger.SplitMessageID(id)
	if w.tracker.delivered(i, id, uint64(seq), sinceStamp(us)) {
		w.arrived(id)
	}
	return true
}

// result closes w's accounting and says how it went: a run of the
// scenario from the window's start to its end, whose connections are the
// ones open when it ended. What the window's connections still owed is
// lost.
func (w *heldWindow) result(rn *Runner, open int) Result {
	res := Result{Scenario: rn.Scenario.Name, Target: rn.Scenario.Target, Kind: rn.Scenario.Kind,
		RunID: w.id, Start: w.start, Duration: w.end.Sub(w.start), Outcome: ResultSuccess, Connections: open}
	res.Lost = w.tracker.close()
	w.tracker.fill(&res)
	res.Away, res.AwayLate, res.AwayLost = w.awayFigures()
	switch {
	case res.Expected > 0 && res.Received == 0:
		res.Outcome = ResultFailure
		res.Error = fmt.Sprintf("the hub delivered none of %d expected messages within loss_timeout %s", res.Expected, rn.Scenario.LossTimeout)
	case open == 0:
		res.Outcome = ResultFailure
		res.Error = fmt.Sprintf("none of the %d held connections was open when the report closed%s", rn.Connections(), dropsSaid(res.Drops))
	default:
		if why := saturation(res, rn.MaxSendLag()); why != "" {
			res.Outcome, res.Error = ResultInconclusive, why
		}
	}
	return res
}

// dropsSaid is what a report says of its drops, in the order of
// clientconn.DropReasons: empty without any.
func dropsSaid(drops map[string]int64) string {
	said := ""
	for _, reason := range clientconn.DropReasons {
		if n := drops[reason]; n > 0 {
			said += fmt.Sprintf(", %d %s", n, reason)
		}
	}
	if said == "" {
		return ""
	}
	return "; drops:" + said[1:]
}

// windows are a held scenario's current report and the one before it,
// which still takes the deliveries of its messages until its loss timeout
// has passed.
type windows struct {
	mu        sync.Mutex
	current   *heldWindow
	draining  *heldWindow
	drainedAt time.Time // when draining is reported
}

// now is the current window.
func (ws *windows) now() *heldWindow {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.current
}

// deliver gives payload to the window that sent it.
func (ws *windows) deliver(i int, payload json.RawMessage) {
	ws.mu.Lock()
	current, draining := ws.current, ws.draining
	ws.mu.Unlock()
	if current != nil && current.deliver(i, payload) {
		return
	}
	if draining != nil {
		draining.deliver(i, payload)
	}
}

// rotate makes next the current window; the one it ends drains until
// drainUntil. It returns the window that was draining before, whose
// report is due (nil when none).
func (ws *windows) rotate(next *heldWindow, drainUntil time.Time) (due *heldWindow) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	due, ws.draining, ws.current, ws.drainedAt = ws.draining, ws.current, next, drainUntil
	return due
}

// drainedBy is when the draining window is due; zero without one.
func (ws *windows) drainedBy() time.Time {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.draining == nil {
		return time.Time{}
	}
	return ws.drainedAt
}

// drained takes the draining window once its loss timeout passed at now.
func (ws *windows) drained(now time.Time) *heldWindow {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.draining == nil || now.Before(ws.drainedAt) {
		return nil
	}
	w := ws.draining
	ws.draining = nil
	return w
}
