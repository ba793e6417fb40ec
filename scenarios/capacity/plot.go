package capacity

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// Plot geometry, in SVG user units.
const (
	plotWidth   = 760.0
	plotHeight  = 420.0
	plotLeft    = 70.0
	plotRight   = 70.0
	plotTop     = 50.0
	plotBottom  = 60.0
	plotTicks   = 5
	plotMinSecs = 1.5 // the latency axis always reaches past the 1 s line
)

// plotArea maps step numbers and values to SVG coordinates.
type plotArea struct {
	steps              int
	maxRate, maxSecond float64
}

func (a plotArea) x(step int) float64 {
	inner := plotWidth - plotLeft - plotRight
	if a.steps <= 1 {
		return plotLeft + inner/2
	}
	return plotLeft + inner*float64(step-1)/float64(a.steps-1)
}

func (a plotArea) y(v, top float64) float64 {
	inner := plotHeight - plotTop - plotBottom
	return plotTop + inner*(1-v/top)
}

func (a plotArea) yRate(v float64) float64   { return a.y(v, a.maxRate) }
func (a plotArea) ySecond(v float64) float64 { return a.y(v, a.maxSecond) }

// WritePlot draws the search as an SVG: throughput (messages per second in
// and out, left axis) and p99 latency (right axis) per step, with the 1 s
// capacity line. Steps that broke the definition are marked red.
func (c Capacity) WritePlot(w io.Writer) error {
	a := plotArea{steps: len(c.Steps), maxRate: 1, maxSecond: plotMinSecs}
	for _, s := range c.Steps {
		a.maxRate = max(a.maxRate, s.InboundMessagesPerSecond(), s.OutboundMessagesPerSecond())
		a.maxSecond = max(a.maxSecond, s.Latency.P99.Seconds())
	}
	a.maxRate, a.maxSecond = niceCeil(a.maxRate*1.1), niceCeil(a.maxSecond*1.1)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, plotHeight, plotWidth, plotHeight)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", plotWidth, plotHeight)
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", plotLeft, escape(c.title()))
	a.axes(&b, c.Steps)
	a.limitLine(&b)
	a.series(&b, "inbound", "#1f77b4", c.Steps, func(s Step) float64 { return a.yRate(s.InboundMessagesPerSecond()) })
	a.series(&b, "outbound", "#2ca02c", c.Steps, func(s Step) float64 { return a.yRate(s.OutboundMessagesPerSecond()) })
	a.series(&b, "p99", "#ff7f0e", c.Steps, func(s Step) float64 { return a.ySecond(s.Latency.P99.Seconds()) })
	a.legend(&b)
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func (c Capacity) title() string {
	t := fmt.Sprintf("Capacity search: %s against %s", c.Result.Scenario, c.Result.Target)
	if found, ok := c.Found(); ok {
		t += fmt.Sprintf(" (capacity %.1f msg/s in at step %d)", found.InboundMessagesPerSecond(), found.Number)
	}
	return t
}

// axes draws the frame, the ticks of both value axes and the step labels.
func (a plotArea) axes(b *bytes.Buffer, steps []Step) {
	bottom, right := plotHeight-plotBottom, plotWidth-plotRight
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`+"\n",
		plotLeft, plotTop, right-plotLeft, bottom-plotTop)
	for i := 0; i <= plotTicks; i++ {
		f := float64(i) / plotTicks
		y := a.yRate(f * a.maxRate)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#eee"/>`+"\n", plotLeft, y, right, y)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y+4, trimFloat(f*a.maxRate))
		fmt.Fprintf(b, `<text x="%g" y="%.1f">%s s</text>`+"\n", right+6, y+4, trimFloat(f*a.maxSecond))
	}
	for _, s := range steps {
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%d</text>`+"\n", a.x(s.Number), bottom+18, s.Senders)
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">sending connections (one step each)</text>`+"\n",
		(plotLeft+right)/2, bottom+40)
	fmt.Fprintf(b, `<text transform="translate(18 %g) rotate(-90)" text-anchor="middle">messages per second</text>`+"\n",
		(plotTop+bottom)/2)
	fmt.Fprintf(b, `<text transform="translate(%g %g) rotate(90)" text-anchor="middle">p99 latency</text>`+"\n",
		plotWidth-14, (plotTop+bottom)/2)
}

// limitLine is the capacity definition: p99 under 1 s.
func (a plotArea) limitLine(b *bytes.Buffer) {
	y := a.ySecond(scenarios.SlowThreshold.Seconds())
	fmt.Fprintf(b, `<line class="limit" x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
		plotLeft, y, plotWidth-plotRight, y)
	fmt.Fprintf(b, `<text x="%g" y="%.1f" fill="#d62728" text-anchor="end">p99 limit 1 s</text>`+"\n", plotWidth-plotRight-4, y-4)
}

// series draws one polyline with a marker per step; failed steps get a
// red marker.
func (a plotArea) series(b *bytes.Buffer, name, color string, steps []Step, y func(Step) float64) {
	points := make([]string, len(steps))
	for i, s := range steps {
		points[i] = fmt.Sprintf("%.1f,%.1f", a.x(s.Number), y(s))
	}
	fmt.Fprintf(b, `<polyline class="%s" points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n",
		name, strings.Join(points, " "), color)
	for _, s := range steps {
		fill := color
		if !s.Passed() {
			fill = "#d62728"
		}
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>step %d: %s</title></circle>`+"\n",
			a.x(s.Number), y(s), fill, s.Number, escape(stepTooltip(s)))
	}
}

func stepTooltip(s Step) string {
	t := fmt.Sprintf("%d sending, %.1f msg/s in, %.1f msg/s out, p99 %s", s.Senders,
		s.InboundMessagesPerSecond(), s.OutboundMessagesPerSecond(), runreport.FormatLatency(s.Latency.P99))
	if !s.Passed() {
		t += ", stopped: " + s.Verdict
	}
	return t
}

func (a plotArea) legend(b *bytes.Buffer) {
	items := []struct{ label, color string }{
		{"msg/s in", "#1f77b4"}, {"msg/s out", "#2ca02c"}, {"p99 latency (right axis)", "#ff7f0e"}, {"step broke the definition", "#d62728"},
	}
	x := plotLeft
	for _, it := range items {
		fmt.Fprintf(b, `<rect x="%g" y="32" width="10" height="10" fill="%s"/><text x="%g" y="41">%s</text>`+"\n",
			x, it.color, x+14, escape(it.label))
		x += 24 + 7*float64(len(it.label))
	}
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string { return fmt.Sprintf("%.4g", v) }

func escape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
