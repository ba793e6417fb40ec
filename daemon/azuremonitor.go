package daemon

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
)

// monitorReaders runs one Azure Monitor reader per target with
// azure_monitor, and feeds each one's server load into
// hubprobe_server_load_ratio.
type monitorReaders struct {
	ctx     context.Context
	opts    Options
	creds   *azure.Credentials
	metrics *monitor.Metrics
	load    *exporter.Metrics
	running map[string]*monitorReader
}

// monitorReader is a running reader and the configuration it started from.
type monitorReader struct {
	*monitor.Reader
	from readerConfig
}

// readerConfig is what a reader depends on: a change to any of it restarts
// the reader.
type readerConfig struct {
	monitor          config.AzureMonitor
	connectionString config.Secret
}

func newMonitorReaders(ctx context.Context, opts Options, creds *azure.Credentials, metrics *monitor.Metrics, load *exporter.Metrics) *monitorReaders {
	return &monitorReaders{ctx: ctx, opts: opts, creds: creds, metrics: metrics, load: load, running: map[string]*monitorReader{}}
}

// wanted lists the targets of cfg that have azure_monitor. Only shard 0
// reads: Azure Monitor bills every call, and the service's figures are the
// same for every shard.
func (rs *monitorReaders) wanted(cfg *config.Config) map[string]config.Target {
	want := map[string]config.Target{}
	if rs.opts.Shard.Index != 0 {
		return want
	}
	for _, t := range cfg.Targets {
		if t.AzureMonitor != nil {
			want[t.Name] = t
		}
	}
	return want
}

// retire stops the readers cfg no longer wants as they run: gone, or
// changed. It runs before the embedded hubs move to cfg, and startMissing
// after, so that a target turning from one into the other keeps the server
// load source its new form sets.
func (rs *monitorReaders) retire(cfg *config.Config) {
	want := rs.wanted(cfg)
	for _, name := range slices.Sorted(maps.Keys(rs.running)) {
		if t, ok := want[name]; !ok || rs.running[name].from != configOf(t) {
			rs.stop(name, !ok)
		}
	}
}

// startMissing starts a reader for every wanted target without one.
func (rs *monitorReaders) startMissing(cfg *config.Config) error {
	want := rs.wanted(cfg)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if _, ok := rs.running[name]; !ok {
			if err := rs.start(want[name]); err != nil {
				return err
			}
		}
	}
	return nil
}

func configOf(t config.Target) readerConfig {
	return readerConfig{monitor: *t.AzureMonitor, connectionString: t.ConnectionString}
}

func (rs *monitorReaders) start(t config.Target) error {
	id, err := monitor.ParseResourceID(t.AzureMonitor.ResourceID)
	if err != nil {
		return fmt.Errorf("target %q: azure_monitor: %w", t.Name, err)
	}
	cred, err := rs.credential(t)
	if err != nil {
		return fmt.Errorf("target %q: azure_monitor: credential: %w", t.Name, err)
	}
	r, err := monitor.Start(rs.ctx, monitor.Options{
		Target: t.Name, Resource: id, Endpoint: t.AzureMonitor.Endpoint, Interval: t.AzureMonitor.Interval,
		Credential: cred, Transport: rs.opts.AzureTransport, Logger: rs.opts.Logger,
	}, rs.metrics)
	if err != nil {
		return err
	}
	rs.running[t.Name] = &monitorReader{Reader: r, from: configOf(t)}
	rs.load.SetServerLoadSource(t.Name, r.ServerLoad)
	return nil
}

// stop ends a target's reader; forget drops its counters too, for a
// target that no longer reads Azure Monitor.
func (rs *monitorReaders) stop(name string, forget bool) {
	rs.running[name].Stop()
	delete(rs.running, name)
	rs.load.RemoveServerLoadSource(name)
	if forget {
		rs.metrics.Forget(name)
	}
}

func (rs *monitorReaders) stopAll() {
	for name := range rs.running {
		rs.stop(name, false)
	}
}

// statuses reports every reader for the status page.
func (rs *monitorReaders) statuses() []monitor.Status {
	out := make([]monitor.Status, 0, len(rs.running))
	for _, r := range rs.running {
		out = append(out, r.Status())
	}
	return out
}

// credential is what t's reader signs in with: the Entra ID credential its
// connection string names with AuthType, or the ambient chain
// (azure.AmbientCredential) for an access-key string, which cannot read
// Azure Monitor, and for a target without one. It is shared with the
// target's scenarios, so one token cache serves both.
func (rs *monitorReaders) credential(t config.Target) (azcore.TokenCredential, error) {
	var cs azure.ConnectionString // the zero string signs in with the ambient chain
	if t.ConnectionString != "" {
		parsed, err := azure.ParseConnectionString(string(t.ConnectionString))
		if err != nil {
			return nil, err
		}
		cs = parsed
	}
	return rs.creds.For(cs)
}
