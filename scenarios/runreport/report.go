// Package runreport writes what one scenario run measured as `hubprobe run`
// prints it and the status page shows it: a text report laid out like the
// benchmark's own, or one JSON object; and the run's verdict, which
// becomes the command's exit code.
package runreport

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

// JSON is the machine-readable form of a run's Result, as printed by
// `hubprobe run --output json`.
type JSON struct {
	Target        string           `json:"target"`
	Scenario      string           `json:"scenario"`
	Kind          string           `json:"kind"`
	RunID         string           `json:"run_id"`
	Start         time.Time        `json:"start"`
	DurationSecs  float64          `json:"duration_seconds"`
	Connections   int              `json:"connections"`
	Sent          int64            `json:"sent"`
	Expected      int64            `json:"expected"`
	Received      int64            `json:"received"`
	Lost          int64            `json:"lost"`
	Duplicated    int64            `json:"duplicated"`
	Reordered     int64            `json:"reordered"`
	SlowMessages  int64            `json:"slow_messages"`
	SentBytes     int64            `json:"sent_bytes"`
	ReceivedBytes int64            `json:"received_bytes"`
	Throttled     map[string]int64 `json:"throttled"`
	// Drops are the connections that ended without the probe asking, by
	// reason; Reconnects the held connections back after one.
	Drops      map[string]int64 `json:"drops"`
	Reconnects int64            `json:"reconnects"`
	// Away, AwayLate and AwayLost are set for held connections: what fell
	// due while a connection was away, and of it what arrived late and
	// what never did.
	Away     int64   `json:"away,omitempty"`
	AwayLate int64   `json:"away_late,omitempty"`
	AwayLost int64   `json:"away_lost,omitempty"`
	Latency  Latency `json:"latency_seconds"`
	// RoundTrip and HubTime say where the latency went: the transport's
	// round trip as the connections measured it, and each delivery's time
	// in the hub. Each is omitted when nothing was measured.
	RoundTrip      *Latency `json:"network_round_trip_seconds,omitempty"`
	HubTime        *Latency `json:"hub_time_seconds,omitempty"`
	MaxSendLagSecs float64  `json:"max_send_lag_seconds"`
	SendLagP99Secs float64  `json:"send_lag_p99_seconds"`
	Scheduled      int64    `json:"scheduled"`
	SendWindowSecs float64  `json:"send_window_seconds"`
	// SentPerSec and ReceivedPerSec are over the sending window.
	SentPerSec     float64 `json:"sent_per_second"`
	ReceivedPerSec float64 `json:"received_per_second"`
	Outcome        string  `json:"outcome"`
	Error          string  `json:"error,omitempty"`
	// Success is the capacity definition: the run completed, 99 % of
	// messages took under 1 s and nothing was lost.
	Success bool `json:"success"`

	// Batches and BatchLatency are set for server_push runs: the time from
	// each request to the last message of its batch.
	Batches      int64    `json:"batches,omitempty"`
	BatchLatency *Latency `json:"batch_latency_seconds,omitempty"`
}

// Latency holds per-run quantiles in seconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// NewJSON converts a run's Result to its JSON form.
func NewJSON(r scenarios.Result) JSON {
	return JSON{
		Target: r.Target, Scenario: r.Scenario, Kind: r.Kind, RunID: r.RunID, Start: r.Start,
		DurationSecs: r.Duration.Seconds(), Connections: r.Connections,
		Sent: r.Sent, Expected: r.Expected, Received: r.Received, Lost: r.Lost,
		Duplicated: r.Duplicated, Reordered: r.Reordered,
		SlowMessages: r.SlowMessages, SentBytes: r.SentBytes, ReceivedBytes: r.ReceivedBytes,
		Throttled:  orEmpty(r.Throttled),
		Drops:      orEmpty(r.Drops),
		Reconnects: r.Reconnects,
		Away:       r.Away, AwayLate: r.AwayLate, AwayLost: r.AwayLost,
		Latency:        latencyReport(r.Latency),
		RoundTrip:      measuredReport(r.RoundTrips, r.RoundTrip),
		HubTime:        measuredReport(r.HubTimes, r.HubTime),
		MaxSendLagSecs: r.MaxSendLag.Seconds(),
		SendLagP99Secs: r.SendLag.P99.Seconds(),
		Scheduled:      r.Scheduled,
		SendWindowSecs: r.SendWindow.Seconds(),
		SentPerSec:     float64(r.Sent) / rateWindow(r).Seconds(),
		ReceivedPerSec: float64(r.Received) / rateWindow(r).Seconds(),
		Batches:        r.Batches,
		BatchLatency:   batchReport(r),
		Outcome:        r.Outcome, Error: r.Error, Success: r.MetSLO(),
	}
}

// orEmpty is m, or an empty map for nil: the JSON always holds an object.
func orEmpty(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

func latencyReport(q scenarios.Quantiles) Latency {
	return Latency{P50: q.P50.Seconds(), P90: q.P90.Seconds(), P99: q.P99.Seconds(), Max: q.Max.Seconds()}
}

func batchReport(r scenarios.Result) *Latency { return measuredReport(r.Batches, r.BatchLatency) }

// measuredReport is q's report, nil when nothing was measured (n is 0).
func measuredReport(n int64, q scenarios.Quantiles) *Latency {
	if n == 0 {
		return nil
	}
	l := latencyReport(q)
	return &l
}

// WriteJSON writes the run as one JSON object.
func WriteJSON(w io.Writer, r scenarios.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewJSON(r))
}

// WriteText writes the run as a human report laid out like the benchmark's
// own step report.
func WriteText(w io.Writer, r scenarios.Result) error {
	secs := rateWindow(r).Seconds()
	lines := []string{
		"-----------",
		fmt.Sprintf("  %s (%s) against %s, %d connections, %s", r.Scenario, r.Kind, r.Target, r.Connections, r.Duration.Round(time.Millisecond)),
		"-----------",
		fmt.Sprintf("  Messages: sent %d, expected %d, received %d, lost %d", r.Sent, r.Expected, r.Received, r.Lost),
		fmt.Sprintf("    Duplicated: %d, reordered: %d", r.Duplicated, r.Reordered),
		fmt.Sprintf("    Requests/sec: %.2f", float64(r.Sent)/secs),
		fmt.Sprintf("    Responses/sec: %.2f", float64(r.Received)/secs),
		fmt.Sprintf("    Write throughput: %s/s", FormatBytes(float64(r.SentBytes)/secs)),
		fmt.Sprintf("    Read throughput: %s/s", FormatBytes(float64(r.ReceivedBytes)/secs)),
		"  Latency:",
		fmt.Sprintf("    50.00%%: %s", FormatLatency(r.Latency.P50)),
		fmt.Sprintf("    90.00%%: %s", FormatLatency(r.Latency.P90)),
		fmt.Sprintf("    99.00%%: %s", FormatLatency(r.Latency.P99)),
		fmt.Sprintf("    max:    %s", FormatLatency(r.Latency.Max)),
		fmt.Sprintf("    >= 1 s: %d of %d", r.SlowMessages, r.Received),
		"  Where the time goes:",
		"    network round trip: " + fmtMeasured(r.RoundTrips, r.RoundTrip),
		"    hub time:           " + fmtMeasured(r.HubTimes, r.HubTime),
		fmt.Sprintf("  Probe send lag: p99 %s, max %s; sent %d of %d scheduled", FormatLatency(r.SendLag.P99), FormatLatency(r.MaxSendLag), r.Sent, r.Scheduled),
		"  Throttled: " + fmtThrottled(r.Throttled),
		"  Drops: " + fmtThrottled(r.Drops) + reconnectsSaid(r),
		"  Result: " + verdict(r),
	}
	// Batches go with the latencies, before the send lag and the verdict;
	// what fell due while held connections were away, after the drops.
	lines = append(lines[:len(lines)-4], append(batchLines(r), lines[len(lines)-4:]...)...)
	lines = append(lines[:len(lines)-1], append(awayLines(r), lines[len(lines)-1:]...)...)
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// reconnectsSaid is how many held connections came back after a drop.
func reconnectsSaid(r scenarios.Result) string {
	if r.Reconnects == 0 {
		return ""
	}
	return fmt.Sprintf("; reconnected %d", r.Reconnects)
}

// awayLines report what fell due while held connections were away.
func awayLines(r scenarios.Result) []string {
	if r.Away == 0 {
		return nil
	}
	return []string{fmt.Sprintf("    While away: %d fell due, %d arrived late, %d lost", r.Away, r.AwayLate, r.AwayLost)}
}

// batchLines reports the time to the last message of server_push batches.
func batchLines(r scenarios.Result) []string {
	if r.Batches == 0 {
		return nil
	}
	b := r.BatchLatency
	return []string{
		fmt.Sprintf("  Batches: %d, time to last message:", r.Batches),
		fmt.Sprintf("    50.00%%: %s", FormatLatency(b.P50)),
		fmt.Sprintf("    99.00%%: %s", FormatLatency(b.P99)),
		fmt.Sprintf("    max:    %s", FormatLatency(b.Max)),
	}
}

// rateWindow is what the report's rates are over: the sending window, so a
// run's ramp-up and drain do not dilute them.
func rateWindow(r scenarios.Result) time.Duration {
	if r.SendWindow > 0 {
		return r.SendWindow
	}
	return max(r.Duration, time.Nanosecond)
}

func verdict(r scenarios.Result) string {
	switch {
	case r.Outcome == scenarios.ResultInconclusive:
		return "INCONCLUSIVE: " + r.Error
	case r.Outcome != scenarios.ResultSuccess:
		return "FAILED: " + r.Error
	case r.MetSLO():
		return "PASS (99 % of messages under 1 s, nothing lost)"
	case r.Lost > 0:
		return fmt.Sprintf("FAIL (%d messages lost)", r.Lost)
	default:
		return "FAIL (more than 1 % of messages took 1 s or more)"
	}
}

// fmtMeasured is the p50 and p99 of n measurements.
func fmtMeasured(n int64, q scenarios.Quantiles) string {
	if n == 0 {
		return "not measured"
	}
	return fmt.Sprintf("p50 %s, p99 %s", FormatLatency(q.P50), FormatLatency(q.P99))
}

// FormatLatency writes a latency as every report does: in milliseconds,
// to the microsecond.
func FormatLatency(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

func fmtThrottled(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%d", k, m[k])
	}
	return s
}

// FormatBytes writes a byte count (or rate) in binary units, as every
// report does.
func FormatBytes(b float64) string {
	units := []string{"B", "KB", "MB", "GB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return fmt.Sprintf("%.2f%s", b, units[i])
}
