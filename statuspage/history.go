package statuspage

import (
	"sync"

	"github.com/hubprobe/hubprobe/scenarios"
)

// DefaultHistoryLimit is how many runs a History keeps when asked for none.
const DefaultHistoryLimit = 100

// History keeps the most recent runs for the status page. Failures are also
// kept on their own, so a failure stays visible after a stream of
// successful runs has pushed it out of the recent list. It is safe for
// concurrent use; the zero value is not, use NewHistory.
type History struct {
	limit int

	mu       sync.Mutex
	seq      uint64
	recent   []historyEntry // oldest first
	failures []historyEntry // oldest first
	last     map[scenarioKey]scenarios.Result
}

// scenarioKey names a scenario by its target and name.
type scenarioKey struct{ target, scenario string }

type historyEntry struct {
	seq    uint64
	result scenarios.Result
}

// NewHistory keeps the last limit runs and, separately, the last limit
// failures. limit <= 0 means DefaultHistoryLimit.
func NewHistory(limit int) *History {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	return &History{limit: limit, last: make(map[scenarioKey]scenarios.Result)}
}

// Add records a finished run.
func (h *History) Add(r scenarios.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	e := historyEntry{seq: h.seq, result: r}
	h.recent = appendBounded(h.recent, e, h.limit)
	if r.Outcome != scenarios.ResultSuccess && r.Outcome != scenarios.ResultSkipped {
		h.failures = appendBounded(h.failures, e, h.limit)
	}
	if r.Outcome != scenarios.ResultSkipped {
		h.last[scenarioKey{r.Target, r.Scenario}] = r
	}
}

func appendBounded(list []historyEntry, e historyEntry, limit int) []historyEntry {
	if len(list) >= limit {
		// Shift in place: the slice never grows past limit, so no
		// reallocation and no unbounded backing array.
		copy(list, list[1:])
		list[len(list)-1] = e
		return list
	}
	return append(list, e)
}

// Recent returns the kept runs, newest first.
func (h *History) Recent() []scenarios.Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	return newestFirst(h.recent)
}

// Failures returns the kept failed runs, newest first, including those
// still in Recent.
func (h *History) Failures() []scenarios.Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	return newestFirst(h.failures)
}

// Last returns the last run of a scenario that actually ran (skipped runs
// do not count).
func (h *History) Last(target, scenario string) (scenarios.Result, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r, ok := h.last[scenarioKey{target, scenario}]
	return r, ok
}

// Run finds the kept run named id, recent or failed; ok is false once it
// was pushed out of both lists.
func (h *History) Run(id string) (scenarios.Result, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, list := range [][]historyEntry{h.recent, h.failures} {
		for i := len(list) - 1; i >= 0; i-- {
			if r := list[i].result; r.RunID != "" && r.RunID == id {
				return r, true
			}
		}
	}
	return scenarios.Result{}, false
}

// Forget drops the last-run entry of a scenario removed from the
// configuration; its past runs stay in the lists until pushed out.
func (h *History) Forget(target, scenario string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.last, scenarioKey{target, scenario})
}

// snapshot returns the recent runs and the failures that are no longer
// among them, both newest first, taken under one lock so they do not
// overlap or miss a run added in between.
func (h *History) snapshot() (recent, olderFailures []scenarios.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var oldestRecent uint64
	if len(h.recent) > 0 {
		oldestRecent = h.recent[0].seq
	}
	var older []historyEntry
	for _, e := range h.failures {
		if e.seq < oldestRecent {
			older = append(older, e)
		}
	}
	return newestFirst(h.recent), newestFirst(older)
}

func newestFirst(list []historyEntry) []scenarios.Result {
	out := make([]scenarios.Result, len(list))
	for i, e := range list {
		out[len(list)-1-i] = e.result
	}
	return out
}
