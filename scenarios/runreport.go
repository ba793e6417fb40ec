package scenarios

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/config"
)

// Report formats `hubprobe run` prints.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Verdict is what one run or capacity search, as `hubprobe run` reports
// it, says of the hub.
type Verdict int

const (
	// VerdictMet is the run that met p99 < 1 s with nothing lost, or the search
	// found a capacity.
	VerdictMet Verdict = iota
	// VerdictMissed is the run that missed that line, or the search found no step
	// that held it.
	VerdictMissed
	// VerdictInconclusive is when the probe could not drive the load (it fell
	// behind its own schedule), so the hub was not measured.
	VerdictInconclusive
)

// Verdict of a run made with senders senders: a shard with none has
// nothing to miss.
func (r Result) Verdict(senders int) Verdict {
	switch {
	case r.Outcome == ResultInconclusive:
		return VerdictInconclusive
	case r.MetSLO(), r.Outcome == ResultSuccess && senders == 0:
		return VerdictMet
	}
	return VerdictMissed
}

// WriteRunReport prints one run in format, with what the profile of its
// scenario s resolved to.
func WriteRunReport(w io.Writer, res Result, s config.Scenario, format string) error {
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			JSONReport
			Profile string `json:"profile,omitempty"`
		}{res.Report(), s.ProfileSummary()})
	}
	if err := res.WriteText(w); err != nil {
		return err
	}
	if p := s.ProfileSummary(); p != "" {
		_, err := fmt.Fprintf(w, "  Profile: %s\n", p)
		return err
	}
	return nil
}
