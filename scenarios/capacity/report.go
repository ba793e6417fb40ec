package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// Report is the machine-readable form of a capacity search, as printed by
// `hubprobe run --output json` for a capacity_search scenario.
type Report struct {
	Target              string  `json:"target"`
	Scenario            string  `json:"scenario"`
	Kind                string  `json:"kind"`
	Profile             string  `json:"profile,omitempty"`
	Connections         int     `json:"connections"`
	MessageSize         int     `json:"message_size_bytes"`
	SendIntervalSeconds float64 `json:"send_interval_seconds"`
	// StopReason is one of StopReasons, empty when the search failed.
	StopReason string `json:"stop_reason"`
	// Capacity is the last step that held; null when none did.
	Capacity *StepReport  `json:"capacity"`
	Steps    []StepReport `json:"steps"`
	Outcome  string       `json:"outcome"`
	Error    string       `json:"error,omitempty"`
}

// StepReport is one step of a Report.
type StepReport struct {
	Step                      int               `json:"step"`
	Sending                   int               `json:"sending_connections"`
	DurationSeconds           float64           `json:"duration_seconds"`
	Sent                      int64             `json:"sent"`
	Expected                  int64             `json:"expected"`
	Received                  int64             `json:"received"`
	Slow                      int64             `json:"slow"`
	Missing                   int64             `json:"missing"`
	SlowShare                 float64           `json:"slow_share"`
	InboundMessagesPerSecond  float64           `json:"inbound_messages_per_second"`
	OutboundMessagesPerSecond float64           `json:"outbound_messages_per_second"`
	InboundBytesPerSecond     float64           `json:"inbound_bytes_per_second"`
	OutboundBytesPerSecond    float64           `json:"outbound_bytes_per_second"`
	Throttled                 int64             `json:"throttled"`
	FailedConnections         int               `json:"failed_connections"`
	Latency                   runreport.Latency `json:"latency_seconds"`
	MaxSendLagSeconds         float64           `json:"max_send_lag_seconds"`
	Passed                    bool              `json:"passed"`
	Verdict                   string            `json:"verdict,omitempty"`
}

// Report converts the search to its JSON form.
func (c Capacity) Report() Report {
	r := Report{
		Target: c.Result.Target, Scenario: c.Result.Scenario, Kind: c.Result.Kind, Profile: c.Scenario.ProfileSummary(),
		Connections: c.Scenario.Connections, MessageSize: c.Scenario.MessageSize,
		SendIntervalSeconds: c.Scenario.SendInterval.Seconds(),
		StopReason:          c.StopReason, Steps: []StepReport{},
		Outcome: c.Result.Outcome, Error: c.Result.Error,
	}
	for _, s := range c.Steps {
		r.Steps = append(r.Steps, s.report())
	}
	if found, ok := c.Found(); ok {
		fr := found.report()
		r.Capacity = &fr
	}
	return r
}

func (s Step) report() StepReport {
	return StepReport{
		Step: s.Number, Sending: s.Senders, DurationSeconds: s.Duration.Seconds(),
		Sent: s.Sent, Expected: s.Expected, Received: s.Received, Slow: s.Slow, Missing: s.Missing(),
		SlowShare:                s.SlowShare(),
		InboundMessagesPerSecond: s.InboundMessagesPerSecond(), OutboundMessagesPerSecond: s.OutboundMessagesPerSecond(),
		InboundBytesPerSecond: s.InboundBytesPerSecond(), OutboundBytesPerSecond: s.OutboundBytesPerSecond(),
		Throttled: s.Throttled, FailedConnections: s.FailedConnections,
		Latency: runreport.Latency{
			P50: s.Latency.P50.Seconds(), P90: s.Latency.P90.Seconds(), P99: s.Latency.P99.Seconds(), Max: s.Latency.Max.Seconds(),
		},
		MaxSendLagSeconds: s.MaxSendLag.Seconds(), Passed: s.Passed(), Verdict: s.Verdict,
	}
}

// WriteJSON writes the search as one JSON object.
func (c Capacity) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c.Report())
}

// WriteText writes the search as a table with one row per step, then the
// capacity and why the ramp stopped.
func (c Capacity) WriteText(w io.Writer) error {
	s := c.Scenario
	head := []string{
		"-----------",
		fmt.Sprintf("  Capacity search: %s (%s) against %s, %d connections, %d-byte messages every %s",
			c.Result.Scenario, c.Result.Kind, c.Result.Target, s.Connections, s.MessageSize, s.SendInterval),
	}
	if p := s.ProfileSummary(); p != "" {
		head = append(head, "  Profile: "+p)
	}
	head = append(head, "-----------")
	if err := writeLines(w, head); err != nil {
		return err
	}
	if err := c.writeSteps(w); err != nil {
		return err
	}
	return writeLines(w, c.conclusion())
}

func (c Capacity) writeSteps(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tsending\tmsg/s in\tmsg/s out\tin\tout\tp50\tp99\tmax\t>= 1 s\tthrottled\tfailed\tresult\t")
	for _, st := range c.Steps {
		result := "pass"
		if !st.Passed() {
			result = "FAIL: " + st.Verdict
		}
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.2f\t%s/s\t%s/s\t%s\t%s\t%s\t%.2f %%\t%d\t%d\t%s\t\n",
			st.Number, st.Senders, st.InboundMessagesPerSecond(), st.OutboundMessagesPerSecond(),
			runreport.FormatBytes(st.InboundBytesPerSecond()), runreport.FormatBytes(st.OutboundBytesPerSecond()),
			runreport.FormatLatency(st.Latency.P50), runreport.FormatLatency(st.Latency.P99), runreport.FormatLatency(st.Latency.Max),
			100*st.SlowShare(), st.Throttled, st.FailedConnections, result)
	}
	return tw.Flush()
}

// conclusion says what the capacity is and why the search stopped.
func (c Capacity) conclusion() []string {
	if !c.Measured() {
		return []string{"  Result: FAILED: " + c.Result.Error}
	}
	var lines []string
	if found, ok := c.Found(); ok {
		lines = append(lines, fmt.Sprintf("  Capacity: %.2f msg/s in, %.2f msg/s out, %s/s in, %s/s out at step %d (%d sending connections)",
			found.InboundMessagesPerSecond(), found.OutboundMessagesPerSecond(),
			runreport.FormatBytes(found.InboundBytesPerSecond()), runreport.FormatBytes(found.OutboundBytesPerSecond()), found.Number, found.Senders))
	} else {
		lines = append(lines, "  Capacity: none; the first step already broke the capacity definition")
	}
	return append(lines, "  Stopped: "+c.stopText())
}

func (c Capacity) stopText() string {
	last := Step{}
	if len(c.Steps) > 0 {
		last = c.Steps[len(c.Steps)-1]
	}
	switch c.StopReason {
	case StopSlowMessages:
		return fmt.Sprintf("step %d: %.2f %% of its messages took 1 s or more (limit 1 %%)", last.Number, 100*last.SlowShare())
	case StopConnectionFailures:
		return fmt.Sprintf("step %d: %d of %d connections failed (limit 1 %%)", last.Number, last.FailedConnections, c.Scenario.Connections)
	case StopThrottled:
		return fmt.Sprintf("step %d: the hub throttled %d times", last.Number, last.Throttled)
	case StopAllSending:
		return "every connection sends; the capacity is at least the last step (add connections to go further)"
	default:
		return fmt.Sprintf("max_steps reached after %d steps; the capacity is at least the last step", len(c.Steps))
	}
}

// Verdict of a search: met when it finished and at least one step held,
// for the capacity is then known.
func (c Capacity) Verdict() runreport.Verdict {
	if c.StopReason == StopProbeSaturated {
		return runreport.VerdictInconclusive
	}
	if _, held := c.Found(); c.Measured() && held {
		return runreport.VerdictMet
	}
	return runreport.VerdictMissed
}

// WriteReport prints a capacity search in format (runreport.FormatText or
// FormatJSON) and, when plotFile is set and a step ran, writes its plot
// (SVG) there; the text report then says where.
func WriteReport(w io.Writer, c Capacity, format, plotFile string) error {
	var err error
	if format == runreport.FormatJSON {
		err = c.WriteJSON(w)
	} else {
		err = c.WriteText(w)
	}
	if err != nil || plotFile == "" || len(c.Steps) == 0 {
		return err
	}
	if err := writePlotFile(c, plotFile); err != nil {
		return fmt.Errorf("writing the plot: %w", err)
	}
	if format != runreport.FormatJSON {
		_, err = fmt.Fprintf(w, "  Plot: %s\n", plotFile)
	}
	return err
}

func writePlotFile(c Capacity, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := c.WritePlot(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func writeLines(w io.Writer, lines []string) error {
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
