package daemon

import (
	"context"

	"github.com/hubprobe/hubprobe/config"
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

// startParts starts them. The event handler tells obs of the events it
// serves, the hubs report their load to sink (nil: nowhere for either).
func startParts(ctx context.Context, opts Options, obs eventhandler.Observer, sink loadSink) (parts, error) {
	events, err := eventhandler.Serve(opts.Logger, obs, opts.EventHandlerAddr)
	if err != nil {
		return parts{}, err
	}
	hubs := newEmbeddedHubs(ctx, opts.Logger, sink)
	hubs.SetWebPubSubEventHandler(events.Template)
	return parts{events: events, hubs: hubs}, nil
}

// resolver binds scenarios to these hubs, to opts and to the recorder
// each scenario's runs report to.
func (p parts) resolver(opts Options, recorder func(config.Scenario) scenarios.Recorder) scenarios.Resolver {
	return scenarios.Resolver{Hubs: p.hubs, Recorder: recorder, Logger: opts.Logger, Shard: opts.Shard}
}

func (p parts) close() {
	p.hubs.Close()
	p.events.Close()
}
