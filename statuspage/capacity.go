package statuspage

import (
	"bytes"
	"net/http"
	"net/url"
	"time"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// capacityView is one scenario's last capacity search on the status page.
type capacityView struct {
	Target     string    `json:"target"`
	Scenario   string    `json:"scenario"`
	Finished   time.Time `json:"finished"`
	Steps      int       `json:"steps"`
	StopReason string    `json:"stop_reason"`
	// Senders and the rates are those of the last step that held; zero
	// when none did.
	Senders                   int     `json:"sending_connections"`
	InboundMessagesPerSecond  float64 `json:"inbound_messages_per_second"`
	OutboundMessagesPerSecond float64 `json:"outbound_messages_per_second"`
	InboundBytesPerSecond     float64 `json:"inbound_bytes_per_second"`
	OutboundBytesPerSecond    float64 `json:"outbound_bytes_per_second"`
	PlotURL                   string  `json:"plot_url"`
}

func capacityViews(list []capacity.Capacity) []capacityView {
	out := make([]capacityView, 0, len(list))
	for _, c := range list {
		found, _ := c.Found()
		out = append(out, capacityView{
			Target: c.Result.Target, Scenario: c.Result.Scenario,
			Finished: c.Result.Start.Add(c.Result.Duration).UTC(), Steps: len(c.Steps), StopReason: c.StopReason,
			Senders:                  found.Senders,
			InboundMessagesPerSecond: found.InboundMessagesPerSecond(), OutboundMessagesPerSecond: found.OutboundMessagesPerSecond(),
			InboundBytesPerSecond: found.InboundBytesPerSecond(), OutboundBytesPerSecond: found.OutboundBytesPerSecond(),
			PlotURL: "capacity/" + url.PathEscape(c.Result.Target) + "/" + url.PathEscape(c.Result.Scenario) + "/plot.svg",
		})
	}
	return out
}

// servePlot draws the last capacity search of one scenario.
func (p *statusPage) servePlot(w http.ResponseWriter, r *http.Request) {
	if p.opts.Capacity == nil {
		http.NotFound(w, r)
		return
	}
	c, ok := p.opts.Capacity.Last(r.PathValue("target"), r.PathValue("scenario"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	var buf bytes.Buffer
	if err := c.WritePlot(&buf); err != nil {
		http.Error(w, "drawing the plot failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
}
