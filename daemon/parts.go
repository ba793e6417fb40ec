package daemon

import (
	"context"

	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/webpubsub/eventhandler"
)

// parts are what every command that runs scenarios starts: the Web PubSub
// event handler, and the embedded hubs pointed at it so that the upstream
// echo needs no setup.
type parts struct {
	events *eventhandler.Served
	hubs   *embeddedHubs
}

// startParts starts them. The event handler counts the events it serves
// in metrics; the hubs report their load to sink (nil: nowhere).
func startParts(ctx context.Context, opts Options, metrics *exporter.Metrics, sink loadSink) (parts, error) {
	events, err := eventhandler.Serve(opts.Logger, metrics, opts.EventHandlerAddr)
	if err != nil {
		return parts{}, err
	}
	hubs := newEmbeddedHubs(ctx, opts.Logger, sink)
	hubs.SetWebPubSubEventHandler(events.Template)
	return parts{events: events, hubs: hubs}, nil
}

// resolver binds scenarios to these hubs, to opts and to metrics.
func (p parts) resolver(opts Options, metrics *exporter.Metrics) scenarios.Resolver {
	return scenarios.Resolver{Hubs: p.hubs, Recorder: metrics.ScenarioRecorder, Logger: opts.Logger, Shard: opts.Shard}
}

func (p parts) close() {
	p.hubs.Close()
	p.events.Close()
}
