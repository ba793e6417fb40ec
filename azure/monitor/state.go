package monitor

import (
	"slices"
	"time"

	"github.com/hubprobe/hubprobe/throttle"
)

const (
	// expireIntervals is how many intervals a value outlives the grain it
	// was read for: past it, the value is not reported at all, so that an
	// alert never fires on a server load nobody can read any more
	// (hubprobe_service_metrics_age_seconds still says how old it is).
	expireIntervals = 15
	// backoffCapIntervals caps the wait after failures, in intervals.
	backoffCapIntervals = 8
)

// backoff is the wait after failed reads without a Retry-After: at least
// the interval, below a ceiling that starts at two and doubles to eight.
func backoff(interval time.Duration) throttle.Backoff {
	return throttle.Backoff{Base: 2 * interval, Cap: backoffCapIntervals * interval, Min: interval}
}

// state is what a reader knows, under its mutex.
type state struct {
	started time.Time
	// metrics are what the query asks for; one Azure says the resource
	// does not have leaves it for dropped.
	metrics []azureMetric
	dropped []string
	// values are the last answer's, replaced whole (never changed in
	// place), so a snapshot may share the map.
	values      map[valueKey]float64
	newest      time.Time // end of the newest grain read; zero before any
	lastRead    time.Time
	lastSuccess time.Time
	missing     []string // metrics the last answer had no value for
	failure     *failure // the last read's; nil when it succeeded
	lastFailure *failure
	failedAt    time.Time
}

// queried lists the metrics the next query asks for.
func (r *Reader) queried() []azureMetric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.state.metrics)
}

// record counts a read and keeps what it brought: an answer replaces the
// values whole; a failed read keeps the old ones, which age.
func (r *Reader) record(a answer, f *failure) {
	target := r.opts.Target
	r.m.reads.WithLabelValues(target).Inc()
	if f != nil {
		r.m.failures.WithLabelValues(target, f.reason).Inc()
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.state
	r.logTransition(s.failure, f)
	s.lastRead, s.failure = now, f
	if f != nil {
		s.lastFailure, s.failedAt = f, now
	}
	if f != nil && f.unknownMetric != "" {
		s.metrics = slices.DeleteFunc(s.metrics, func(m azureMetric) bool { return m.name == f.unknownMetric })
		s.dropped = append(s.dropped, f.unknownMetric)
	}
	if a.values == nil {
		return
	}
	s.values, s.missing, s.lastSuccess = a.values, a.missing, now
	s.newest = later(s.newest, a.newest)
}

// logTransition logs a read that fails differently from the one before it,
// and the first success after failures; not every failure.
func (r *Reader) logTransition(before, after *failure) {
	log := r.opts.Logger.With().Str("target", r.opts.Target).Logger()
	switch {
	case after != nil && (before == nil || before.reason != after.reason || before.detail != after.detail):
		log.Warn().Str("reason", after.reason).Str("failure", after.detail).Msg("reading Azure Monitor failed")
	case after == nil && before != nil:
		log.Info().Msg("reading Azure Monitor works again")
	}
}

// snapshot is what the metrics report at one moment.
type snapshot struct {
	values map[valueKey]float64 // nil once expired
	age    time.Duration
}

func (r *Reader) snapshot(now time.Time) snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := r.state.newest
	if from.IsZero() {
		from = r.state.started
	}
	s := snapshot{age: max(now.Sub(from), 0)}
	if !r.state.newest.IsZero() && s.age <= expireIntervals*r.opts.Interval {
		s.values = r.state.values
	}
	return s
}

// Status is what the status page says of a reader.
type Status struct {
	Target     string
	ResourceID string
	// LastRead is when the last query was answered or failed; zero before.
	LastRead time.Time
	// DataUntil is the end of the newest time grain read; zero before any.
	DataUntil time.Time
	// Failing is true when the last read failed.
	Failing bool
	// LastFailure names the last failure, e.g. "forbidden: HTTP 403
	// AuthorizationFailed"; empty if none happened. LastFailureAt is when.
	LastFailure   string
	LastFailureAt time.Time
	// Dropped lists the metrics Azure Monitor said the resource does not
	// have, which the query no longer asks for.
	Dropped []string
}

// Status reports the reader's state for the status page.
func (r *Reader) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	st := Status{Target: r.opts.Target, ResourceID: r.opts.Resource.String(), LastRead: s.lastRead,
		DataUntil: s.newest, Failing: s.failure != nil, Dropped: slices.Clone(s.dropped)}
	if s.lastFailure != nil {
		st.LastFailure, st.LastFailureAt = s.lastFailure.reason+": "+s.lastFailure.detail, s.failedAt
	}
	return st
}
