package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hubprobe/hubprobe/config"
)

// Report formats `hubprobe run` prints.
const (
	FormatText = "text"
	FormatJSON = "json"
)

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
