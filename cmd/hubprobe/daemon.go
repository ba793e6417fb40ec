package main

import (
	"context"
	"sync"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/webpubsub/eventhandler"
)

// daemon ties a config to the running parts: embedded hubs, the scheduler and
// the exporter's per-scenario series.
type daemon struct {
	log     zerolog.Logger
	metrics *exporter.Metrics
	hubs    *hub.Embedded
	sched   *scenarios.Scheduler
	pauses  scenarios.Pauses // per target, kept across reloads
	shard   scenarios.Shard
	search  scenarios.SearchOptions
	events  *eventhandler.Served // the Web PubSub event handler

	mu  sync.Mutex
	cfg *config.Config // the config applied last
}

// newDaemon starts the parts no config has chosen yet: the event handler
// and, empty, the embedded hubs (pointed at it) and the scheduler.
func newDaemon(ctx context.Context, log zerolog.Logger, metrics *exporter.Metrics) (*daemon, error) {
	events, err := eventhandler.Serve(log, metrics, "")
	if err != nil {
		return nil, err
	}
	d := &daemon{log: log, metrics: metrics, events: events}
	d.hubs = hub.NewEmbedded(ctx, log, metrics)
	d.hubs.SetWebPubSubEventHandler(events.Template)
	d.sched = scenarios.NewScheduler(ctx, log)
	return d, nil
}

// resolver binds scenarios to the daemon's hubs and metrics.
func (d *daemon) resolver() scenarios.Resolver {
	return scenarios.Resolver{Hubs: d.hubs, Recorder: d.metrics.ScenarioRecorder, Logger: d.log, Pauses: &d.pauses,
		Shard: d.shard, Search: d.search}
}

// apply moves every part to cfg, then forgets the series of scenarios that
// are gone so dashboards do not show ghosts.
func (d *daemon) apply(cfg *config.Config) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.hubs.Sync(cfg); err != nil {
		return err
	}
	jobs, err := d.resolver().Jobs(cfg)
	if err != nil {
		return err
	}
	if err := d.sched.Apply(jobs, cfg.Global.StartJitter); err != nil {
		return err
	}
	d.events.SetHubs(scenarios.EventHandlerKeys(jobs))
	d.metrics.ApplyTiers(cfg.Targets)
	if d.cfg != nil {
		d.metrics.ForgetRemoved(d.cfg.Scenarios, cfg.Scenarios)
	}
	d.cfg = cfg
	return nil
}

// statuses lists the configured scenarios for the status page.
func (d *daemon) statuses() []exporter.ScenarioStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cfg == nil {
		return nil
	}
	return exporter.ScenarioStatuses(d.cfg.Scenarios)
}

func (d *daemon) stop(_ context.Context) {
	d.sched.Stop()
	d.hubs.Close()
	d.events.Close()
}
