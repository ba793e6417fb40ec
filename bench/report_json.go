package bench

import (
	"encoding/json"
	"io"
	"time"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// JSONReport is `hubprobe bench --output json`: the benchmark's own result
// shape (its PascalCase names) with each step's latency classes and round
// check, and hubprobe's figures under "hubprobe".
type JSONReport struct {
	Connections int        `json:"Connections"`
	Items       []JSONItem `json:"Items"`
	Hubprobe    JSONRun    `json:"hubprobe"`
}

// JSONItem is one step.
type JSONItem struct {
	SendingStep int         `json:"SendingStep"`
	Duration    float64     `json:"Duration"` // milliseconds, whole seconds as in the text
	Message     JSONMessage `json:"Message"`
	Latency     JSONLatency `json:"Latency"`
	// LatencyClasses counts deliveries by the later benchmark's classes.
	LatencyClasses    map[string]int64 `json:"LatencyClasses"`
	Suspicious        bool             `json:"Suspicious"`
	SuspiciousReasons []string         `json:"SuspiciousReasons"`
	Hubprobe          JSONStep         `json:"hubprobe"`
}

// JSONMessage counts messages and their payload bytes as the benchmark does.
type JSONMessage struct {
	TotalSend        int64 `json:"TotalSend"`
	TotalRecv        int64 `json:"TotalRecv"`
	TotalSendMsgSize int64 `json:"TotalSendMsgSize"`
	TotalRecvMsgSize int64 `json:"TotalRecvMsgSize"`
}

// JSONLatency holds, for each percentile, the 100 ms bound (in ms) it was
// reached by; 1100 when not below 1 s.
type JSONLatency struct {
	PercentileList []float64 `json:"PercentileList"`
	LatencyList    []int64   `json:"LatencyList"`
}

// JSONStep is hubprobe's view of a step: the capacity search's step as
// judged (the benchmark's stop rule gives passed and verdict), and the
// final count of its deliveries.
type JSONStep struct {
	capacity.StepReport
	Connected     int   `json:"connected"`
	Delivered     int64 `json:"delivered"`
	SlowDelivered int64 `json:"slow_delivered"`
	Lost          int64 `json:"lost"`
	// ObjectiveMet is hubprobe's objective for the step: 99 % under 1 s,
	// nothing lost.
	ObjectiveMet bool `json:"objective_met"`
}

// JSONRun describes the whole run.
type JSONRun struct {
	File               string   `json:"file"`
	Scenario           string   `json:"scenario"`
	Kind               string   `json:"kind"`
	EstablishedSeconds float64  `json:"established_seconds"`
	PlannedSteps       int      `json:"planned_steps"`
	StopReason         string   `json:"stop_reason"`
	Stopped            string   `json:"stopped,omitempty"`
	Outcome            string   `json:"outcome"`
	Error              string   `json:"error,omitempty"`
	Warnings           []string `json:"warnings"`
	Result             string   `json:"result"`
	// Passed decides the exit code: the whole ramp ran and every step met
	// hubprobe's objective.
	Passed bool `json:"passed"`
}

// JSON converts the report to its JSON form.
func (r *Report) JSON() JSONReport {
	out := JSONReport{Connections: r.connected(), Items: []JSONItem{}, Hubprobe: r.jsonRun()}
	steps := r.Steps.Report().Steps
	for i, it := range r.Items {
		out.Items = append(out.Items, it.json(steps[i]))
	}
	return out
}

func (r *Report) jsonRun() JSONRun {
	run := JSONRun{
		File: r.Plan.File, Scenario: r.Plan.Name, Kind: r.Plan.Kind,
		EstablishedSeconds: r.Established.Seconds(), PlannedSteps: r.Planned,
		StopReason: r.Steps.StopReason, Stopped: r.stopped(),
		Outcome: r.Steps.Result.Outcome, Error: r.Steps.Result.Error,
		Warnings: []string{}, Result: r.verdict(), Passed: r.Passed(),
	}
	for _, w := range r.Plan.Warnings {
		run.Warnings = append(run.Warnings, w.Error())
	}
	return run
}

func (it Item) json(step capacity.StepReport) JSONItem {
	classes := make(map[string]int64, len(v2Classes))
	for _, c := range v2Classes {
		classes[c.Name] = sumClasses(it.Tally.Classes, c.from, c.to)
	}
	return JSONItem{
		SendingStep: it.Step.Senders,
		Duration:    float64(time.Duration(it.Seconds)*time.Second) / float64(time.Millisecond),
		Message: JSONMessage{
			TotalSend: it.Step.Sent, TotalRecv: it.Tally.Delivered,
			TotalSendMsgSize: it.SentSize, TotalRecvMsgSize: it.ReceivedSize,
		},
		Latency:        JSONLatency{PercentileList: percentiles, LatencyList: it.latencyList()},
		LatencyClasses: classes, Suspicious: len(it.Suspicious) > 0, SuspiciousReasons: append([]string{}, it.Suspicious...),
		Hubprobe: JSONStep{
			StepReport: step, Connected: it.Connected, Delivered: it.Tally.Delivered,
			SlowDelivered: it.Slow, Lost: it.Lost, ObjectiveMet: it.Passed(),
		},
	}
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.JSON())
}
