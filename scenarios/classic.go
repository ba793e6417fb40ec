package scenarios

import (
	"context"

	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// classicDialer opens classic ASP.NET SignalR connections to the
// endpoint's hub (the benchmark's Signalrbench), each with its own
// Measure handler and observer, so every delivery and round trip counts
// against the receiver that saw it; a reconnect after a dropped transport
// counts in the recorder.
func (rn *Runner) classicDialer(run *Run) dialFunc {
	base := aspnetclient.Options{
		URL:                rn.Endpoint.URL,
		Hub:                rn.Endpoint.AspNetHub,
		Transport:          rn.Scenario.Transport,
		FallbackTransports: rn.Scenario.FallbackTransports,
		AccessToken:        rn.Endpoint.AccessToken,
		Headers:            rn.Endpoint.Headers,
		Settings:           clientconn.Settings{WriteTimeout: rn.stallWait()},
		OnReconnected:      rn.Recorder.Reconnected,
	}
	return func(ctx context.Context, i int) (*Client, error) {
		opts := base
		opts.Observer = observer{t: run.tracker, conn: i}
		opts.Handlers = map[string]aspnetclient.Handler{"Measure": classicMeasure(run, i)}
		conn, err := aspnetclient.Dial(ctx, opts)
		if err != nil {
			return nil, err
		}
		return &Client{Classic: conn, ID: conn.ConnectionID(), hub: classicHub{conn}}, nil
	}
}
