// Package daemon runs what a configuration sets going: the embedded hubs
// (a reference hub for each embedded target, kept in step with the
// configuration), the Web PubSub event handler they call, the scheduler of
// every scenario and the metrics and pages they record into. It serves
// them on the web listeners it claims (ListenWeb, Serve), applies a
// reloaded configuration in place, and runs a single scenario once on the
// same parts.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/schedule"
	"github.com/hubprobe/hubprobe/statuspage"
)

// historySize is how many recent runs the status page lists.
const historySize = 100

// ErrBadConfig marks an error of the configuration file: a usage error.
var ErrBadConfig = errors.New("bad configuration")

// Options are what the command line chose.
type Options struct {
	Logger zerolog.Logger
	// Shard is this process's part of every scenario; Search tunes sharded
	// capacity searches.
	Shard  scenarios.Shard
	Search capacity.SearchOptions
	// EventHandlerAddr is where the Web PubSub event handler also listens,
	// for a service that is not embedded; empty: loopback only.
	EventHandlerAddr string
	// ConfigFile is the daemon's configuration; empty: the embedded
	// default. Build is what /metrics and the status page say of the
	// binary.
	ConfigFile string
	Build      exporter.BuildInfo
	// AzureTransport sends the Azure Monitor readers' requests and every
	// Entra ID sign-in; nil: azcore's default HTTP client.
	AzureTransport policy.Transporter
}

// Daemon ties a configuration to the running parts.
type Daemon struct {
	opts    Options
	reg     *prometheus.Registry
	metrics *exporter.Metrics
	// monitorMetrics are the Azure Monitor readers' series.
	monitorMetrics *monitor.Metrics
	history        *statuspage.History
	capacity       *statuspage.CapacityLog
	config         *config.SafeConfig
	parts          parts
	sched          *schedule.Scheduler
	pauses         scenarios.Pauses // per target, kept across reloads
	// creds signs in with Microsoft Entra ID, one credential per sign-in
	// kept across reloads, so azidentity's token caches are too.
	creds   azure.Credentials
	readers *monitorReaders // Azure Monitor, per target

	mu      sync.Mutex
	applied *config.Config // the config applied last
}

// New loads the configuration (an error wrapping ErrBadConfig when it is
// bad), starts the parts and applies the configuration to them. They run
// until ctx ends or Stop. The embedded hubs and the event handler listen
// on random ports: a caller that serves on addresses of its own listens on
// them before New, so that none of those ports can be one of them.
func New(ctx context.Context, opts Options) (*Daemon, error) {
	d, err := newMetrics(opts)
	if err != nil {
		return nil, err
	}
	d.config = config.NewSafeConfig(d.reg, scenarios.Kinds())
	if err := d.config.LoadOrDefault(opts.ConfigFile); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if d.parts, err = startParts(ctx, opts, d.metrics, d.metrics); err != nil {
		return nil, err
	}
	d.sched = schedule.New(ctx, opts.Logger, opts.Search, d.metrics)
	d.readers = newMonitorReaders(ctx, opts, &d.creds, d.monitorMetrics, d.metrics)
	if err := d.Apply(d.config.Get()); err != nil {
		d.Stop()
		return nil, err
	}
	return d, nil
}

// newMetrics makes the registry, with the Go and process collectors, and
// what the runs record into.
func newMetrics(opts Options) (*Daemon, error) {
	d := &Daemon{opts: opts, reg: prometheus.NewRegistry(),
		history: statuspage.NewHistory(historySize), capacity: statuspage.NewCapacityLog(),
		creds: azure.Credentials{Options: azure.CredentialOptions{Transport: opts.AzureTransport}}}
	d.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var err error
	d.metrics, err = exporter.NewMetrics(d.reg, exporter.WithHistory(d.history), exporter.WithBuildInfo(opts.Build),
		exporter.WithCapacityLog(d.capacity), exporter.WithShard(opts.Shard.Index, opts.Shard.Count))
	if err != nil {
		return nil, err
	}
	d.monitorMetrics, err = monitor.NewMetrics(d.reg)
	return d, err
}

// Apply moves every part to cfg, then forgets the series of scenarios that
// are gone so dashboards do not show ghosts.
func (d *Daemon) Apply(cfg *config.Config) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.readers.retire(cfg)
	if err := d.parts.hubs.Sync(cfg); err != nil {
		return err
	}
	r := d.parts.resolver(d.opts, d.metrics.ScenarioRecorder)
	r.Pauses = &d.pauses
	r.Credentials = &d.creds
	jobs, err := r.Jobs(cfg)
	if err != nil {
		return err
	}
	if err := d.sched.Apply(jobs, cfg.Global.StartJitter); err != nil {
		return err
	}
	d.parts.events.SetHubs(scenarios.EventHandlerKeys(jobs))
	if err := d.readers.startMissing(cfg); err != nil {
		return err
	}
	d.metrics.ApplyTiers(cfg.Targets)
	d.metrics.ApplyObjectives(cfg.Scenarios)
	if d.applied != nil {
		d.metrics.ForgetRemoved(d.applied.Scenarios, cfg.Scenarios)
	}
	d.applied = cfg
	return nil
}

// Stop ends every run and closes the hubs and the event handler.
func (d *Daemon) Stop() {
	d.sched.Stop()
	d.mu.Lock()
	d.readers.stopAll()
	d.mu.Unlock()
	d.parts.close()
}
