package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

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
	// VerdictMet: the run met p99 < 1 s with nothing lost, or the search
	// found a capacity.
	VerdictMet Verdict = iota
	// VerdictMissed: the run missed that line, or the search found no step
	// that held it.
	VerdictMissed
	// VerdictInconclusive: the probe could not drive the load (it fell
	// behind its own schedule), so the hub was not measured.
	VerdictInconclusive
)

// RunAndReport runs the scenario once from at within its timeout (a
// capacity_search scenario runs its search), prints the report to w in
// format, writes a search's plot to plotFile when set, and returns the
// verdict. The error is one of writing the report.
func (rn *Runner) RunAndReport(ctx context.Context, at time.Time, w io.Writer, format, plotFile string) (Verdict, error) {
	ctx, cancel := context.WithDeadline(ctx, at.Add(rn.Scenario.Timeout))
	defer cancel()
	if rn.Scenario.Mode == config.ModeCapacitySearch {
		c := rn.SearchCapacityAt(ctx, at)
		return c.Verdict(), WriteCapacityReport(w, c, format, plotFile)
	}
	res := rn.RunAt(ctx, at)
	return res.Verdict(rn.Senders()), WriteRunReport(w, res, rn.Scenario, format)
}

// Verdict of a search: met when it finished and at least one step held,
// for the capacity is then known.
func (c Capacity) Verdict() Verdict {
	if c.StopReason == StopProbeSaturated {
		return VerdictInconclusive
	}
	if _, held := c.Found(); c.Measured() && held {
		return VerdictMet
	}
	return VerdictMissed
}

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

// WriteCapacityReport prints a capacity search in format and, when plotFile
// is set and a step ran, writes its plot (SVG) there; the text report then
// says where.
func WriteCapacityReport(w io.Writer, c Capacity, format, plotFile string) error {
	var err error
	if format == FormatJSON {
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
	if format != FormatJSON {
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
		f.Close()
		return err
	}
	return f.Close()
}
