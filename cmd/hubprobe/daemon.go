package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
)

// daemon ties a config to the running parts: embedded hubs, the scheduler and
// the exporter's per-scenario series.
type daemon struct {
	log     zerolog.Logger
	metrics *exporter.Metrics
	hubs    *embeddedHubs
	sched   *scenarios.Scheduler

	mu      sync.Mutex
	cfg     *config.Config
	applied map[exporter.ScenarioInfo]bool
}

// apply moves every part to cfg, then forgets the series of scenarios that
// are gone so dashboards do not show ghosts.
func (d *daemon) apply(cfg *config.Config) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.hubs.sync(cfg); err != nil {
		return err
	}
	if err := d.sched.Apply(cfg); err != nil {
		return err
	}
	applyTiers(d.metrics, cfg)
	now := map[exporter.ScenarioInfo]bool{}
	for _, s := range cfg.Scenarios {
		now[scenarioInfo(s)] = true
	}
	for info := range d.applied {
		if !now[info] {
			d.metrics.Forget(info)
		}
	}
	d.cfg, d.applied = cfg, now
	return nil
}

// runnerFor is the scheduler's RunnerFactory.
func (d *daemon) runnerFor(cfg *config.Config, s config.Scenario) (*scenarios.Runner, error) {
	t, ok := cfg.Target(s.Target)
	if !ok {
		return nil, fmt.Errorf("scenario %q: unknown target %q", s.Name, s.Target)
	}
	ep, err := endpointFor(t, d.hubs)
	if err != nil {
		return nil, err
	}
	return &scenarios.Runner{
		Scenario: s,
		Endpoint: ep,
		Recorder: d.metrics.Recorder(scenarioInfo(s)),
		Logger:   d.log.With().Str("target", s.Target).Str("scenario", s.Name).Logger(),
	}, nil
}

func endpointFor(t *config.Target, hubs *embeddedHubs) (scenarios.Endpoint, error) {
	ep := scenarios.Endpoint{
		URL:             t.URL,
		AccessToken:     string(t.AccessToken),
		SkipNegotiation: t.SkipNegotiation,
		Headers:         http.Header{},
	}
	for k, v := range t.Headers {
		ep.Headers.Set(k, v)
	}
	if t.Embedded {
		url, ok := hubs.url(t.Name)
		if !ok {
			return ep, fmt.Errorf("target %q: embedded hub is not running", t.Name)
		}
		ep.URL = url
	}
	if !t.Serverless() {
		return ep, nil
	}
	return serverlessEndpoint(t, ep, hubs)
}

// serverlessEndpoint adds what serverless mode needs: the connection string,
// the target's own or, for an embedded target, its hub's emulated service.
// Errors name the target and the key at fault, never the string.
func serverlessEndpoint(t *config.Target, ep scenarios.Endpoint, hubs *embeddedHubs) (scenarios.Endpoint, error) {
	raw := string(t.ConnectionString)
	if t.Embedded {
		var ok bool
		if raw, ok = hubs.connectionString(t.Name); !ok {
			return ep, fmt.Errorf("target %q: embedded hub has no access key", t.Name)
		}
	}
	cs, err := azure.ParseConnectionString(raw)
	if err != nil {
		return ep, fmt.Errorf("target %q: %w", t.Name, err)
	}
	ep.Serverless = &scenarios.Serverless{ConnectionString: cs, Hub: t.Hub, RESTAPIVersion: t.RESTAPIVersion}
	return ep, nil
}

func scenarioInfo(s config.Scenario) exporter.ScenarioInfo {
	return exporter.ScenarioInfo{Target: s.Target, Scenario: s.Name, Kind: s.Kind, Transport: s.Transport, Protocol: s.Protocol}
}

// statuses lists the configured scenarios for the status page.
func (d *daemon) statuses() []exporter.ScenarioStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cfg == nil {
		return nil
	}
	out := make([]exporter.ScenarioStatus, 0, len(d.cfg.Scenarios))
	for _, s := range d.cfg.Scenarios {
		out = append(out, exporter.ScenarioStatus{
			Name: s.Name, Target: s.Target, Kind: s.Kind, Schedule: s.Schedule, Profile: s.ProfileSummary(), Mode: s.Mode,
		})
	}
	return out
}

func (d *daemon) stop(_ context.Context) {
	d.sched.Stop()
	d.hubs.close()
}
