package runreport

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
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
	// VerdictMet is a run that met p99 < 1 s with nothing lost, or a
	// search that found a capacity.
	VerdictMet Verdict = iota
	// VerdictMissed is a run that missed that line, or a search that found
	// no step that held it.
	VerdictMissed
	// VerdictInconclusive is a run or search the probe could not drive (it
	// fell behind its own schedule): the hub was not measured.
	VerdictInconclusive
)

// RunVerdict is the verdict of run r made with senders senders: a shard
// with none has nothing to miss.
func RunVerdict(r scenarios.Result, senders int) Verdict {
	switch {
	case r.Outcome == scenarios.ResultInconclusive:
		return VerdictInconclusive
	case r.MetSLO(), r.Outcome == scenarios.ResultSuccess && senders == 0:
		return VerdictMet
	}
	return VerdictMissed
}

// Write prints one run in format, with what the profile of its scenario s
// resolved to.
func Write(w io.Writer, res scenarios.Result, s config.Scenario, format string) error {
	if format == FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			JSON
			Profile string `json:"profile,omitempty"`
		}{NewJSON(res), s.ProfileSummary()})
	}
	if err := WriteText(w, res); err != nil {
		return err
	}
	if p := s.ProfileSummary(); p != "" {
		_, err := fmt.Fprintf(w, "  Profile: %s\n", p)
		return err
	}
	return nil
}
