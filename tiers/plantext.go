package tiers

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText renders the plan for people in four blocks: scenarios, tier,
// limits, app servers and caveats. file is the workload file the plan was
// made from, named in the heading.
func (r Recommendation) WriteText(out io.Writer, file string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Capacity plan for %s from the %s\n", r.Service, r.Source)
	fmt.Fprintf(&b, "Workload %s; every limit kept at or under %s\n\n", file, planPercent(r.MaxLoad))
	r.writeScenarios(&b)
	b.WriteString("\n" + r.tierLine() + "\n\n")
	r.writeChecks(&b)
	r.writeAppServers(&b)
	if len(r.Caveats) > 0 {
		b.WriteString("\nCaveats:\n")
		for _, c := range r.Caveats {
			b.WriteString("  - " + c + "\n")
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func (r Recommendation) writeScenarios(b *strings.Builder) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tKIND\tTABLE\tCONNECTIONS\tSENDERS\tMESSAGE\tEVERY\tINBOUND\tOUTBOUND")
	for _, s := range r.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%ss\t%s\t%s\n", s.Name, s.Kind, s.Table, s.Connections, s.Senders,
			planMessageSize(s), strconv.FormatFloat(s.SendIntervalSeconds, 'g', -1, 64),
			planRate(s.InboundBytesPerSecond, s.InboundMessagesPerSecond), planRate(s.OutboundBytesPerSecond, s.OutboundMessagesPerSecond))
	}
	t := r.Total
	fmt.Fprintf(tw, "total\t\t\t%d\t\t\t\t%s\t%s\n", t.Connections,
		planRate(t.InboundBytesPerSecond, t.InboundMessagesPerSecond), planRate(t.OutboundBytesPerSecond, t.OutboundMessagesPerSecond))
	_ = tw.Flush() // into a strings.Builder, which never fails
}

func (r Recommendation) tierLine() string {
	switch {
	case !r.Fits:
		return fmt.Sprintf("Tier: none in the guide holds this workload; on unit %d, the largest, %s is at %s",
			r.Units, r.Deciding, planPercent(r.DecidingUtilization))
	case r.DecidingUnits != r.Units:
		return fmt.Sprintf("Tier: unit %d; %s decides: on unit %d it would be at %s",
			r.Units, r.Deciding, r.DecidingUnits, planPercent(r.DecidingUtilization))
	}
	return fmt.Sprintf("Tier: unit %d, the smallest; the most loaded limit is %s at %s",
		r.Units, r.Deciding, planPercent(r.DecidingUtilization))
}

func (r Recommendation) writeChecks(b *strings.Builder) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "LIMIT ON UNIT %d\tDEMAND\tCAPACITY\tUSE\tHEADROOM TO %s\n", r.Units, planPercent(r.MaxLoad))
	for _, c := range r.Checks {
		note := ""
		if c.Interpolated {
			note = " (interpolated)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%s\n", c.Limit, planQuantity(c.Quantity, c.Demand),
			planQuantity(c.Quantity, c.Capacity), note, planPercent(c.Utilization), planQuantity(c.Quantity, c.Headroom))
	}
	_ = tw.Flush() // into a strings.Builder, which never fails
}

func (r Recommendation) writeAppServers(b *strings.Builder) {
	if r.AppServers == 0 {
		return
	}
	fmt.Fprintf(b, "\nApp servers (the guide's suggestion on unit %d): %d\n", r.Units, r.AppServers)
	for _, s := range r.Scenarios {
		count := "not given"
		if s.AppServers > 0 {
			count = strconv.Itoa(s.AppServers)
		}
		fmt.Fprintf(b, "  %s (%s): %s\n", s.Name, s.Table, count)
	}
}

func planMessageSize(s ScenarioDemand) string {
	if s.CountedMessageSize != s.MessageSize {
		return fmt.Sprintf("%d B (counted %d B)", s.MessageSize, s.CountedMessageSize)
	}
	return fmt.Sprintf("%d B", s.MessageSize)
}

func planRate(bytesPerSecond, messagesPerSecond float64) string {
	return planBytes(bytesPerSecond) + "/s (" + planNumber(messagesPerSecond) + " msg/s)"
}

func planQuantity(kind string, v float64) string {
	switch kind {
	case QuantityBytesPerSecond:
		return planBytes(v) + "/s"
	case QuantityMessagesPerSecond:
		return planNumber(v) + " msg/s"
	}
	return planNumber(v)
}

// planBytes prints decimal prefixes, as the guides print their tables.
func planBytes(v float64) string {
	abs := max(v, -v)
	switch {
	case abs >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + " GB"
	case abs >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + " MB"
	case abs >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " kB"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " B"
}

func planNumber(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func planPercent(ratio float64) string {
	return strconv.FormatFloat(100*ratio, 'f', 1, 64) + " %"
}

// Write prints the plan of the workload in file as text or, when format is
// "json", as JSON.
func (r Recommendation) Write(out io.Writer, format, file string) error {
	if format == "json" {
		return r.WriteJSON(out)
	}
	return r.WriteText(out, file)
}

// WriteJSON writes the plan as indented JSON, the form `hubprobe plan
// --output json` prints.
func (r Recommendation) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
