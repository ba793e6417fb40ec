package statuspage

import (
	"sort"
	"sync"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// CapacityLog keeps the last measured capacity search of each scenario for
// the status page and its plots. It is safe for concurrent use.
type CapacityLog struct {
	mu   sync.Mutex
	last map[scenarioKey]capacity.Capacity
}

// NewCapacityLog returns an empty log.
func NewCapacityLog() *CapacityLog {
	return &CapacityLog{last: map[scenarioKey]capacity.Capacity{}}
}

// Add keeps c as the last search of a scenario.
func (l *CapacityLog) Add(target, scenario string, c capacity.Capacity) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last[scenarioKey{target, scenario}] = c
}

// Last returns the last measured search of a scenario.
func (l *CapacityLog) Last(target, scenario string) (capacity.Capacity, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.last[scenarioKey{target, scenario}]
	return c, ok
}

// Forget drops a scenario removed from the configuration.
func (l *CapacityLog) Forget(target, scenario string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, scenarioKey{target, scenario})
}

// all returns every kept search, by target and scenario.
func (l *CapacityLog) all() []capacity.Capacity {
	l.mu.Lock()
	out := make([]capacity.Capacity, 0, len(l.last))
	for _, c := range l.last {
		out = append(out, c)
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Result, out[j].Result
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Scenario < b.Scenario
	})
	return out
}
