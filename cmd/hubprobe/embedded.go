package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
)

// embeddedHubs runs one reference hub on loopback for every target with
// embedded: true, and keeps them in step with the config across reloads.
type embeddedHubs struct {
	ctx  context.Context
	log  zerolog.Logger
	load func(target string, load func() float64)
	drop func(target string)

	mu      sync.Mutex
	running map[string]*embeddedHub
}

type embeddedHub struct {
	hub *hub.Hub
	srv *hub.Server
	reg *prometheus.Registry
	cfg config.EmbeddedHub
}

func newEmbeddedHubs(ctx context.Context, log zerolog.Logger, load func(string, func() float64), drop func(string)) *embeddedHubs {
	return &embeddedHubs{ctx: ctx, log: log, load: load, drop: drop, running: map[string]*embeddedHub{}}
}

// sync starts hubs for new embedded targets, stops those no longer wanted,
// and applies a changed delivery delay in place; any other change restarts
// the hub.
func (e *embeddedHubs) sync(cfg *config.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	wanted := map[string]bool{}
	for _, t := range cfg.Targets {
		if !t.Embedded {
			continue
		}
		wanted[t.Name] = true
		if cur, ok := e.running[t.Name]; ok {
			if sameButDelay(cur.cfg, t.EmbeddedHub) {
				cur.hub.SetDeliveryDelay(t.EmbeddedHub.DeliveryDelay)
				cur.cfg = t.EmbeddedHub
				continue
			}
			e.stop(t.Name)
		}
		if err := e.start(t.Name, t.EmbeddedHub); err != nil {
			return err
		}
	}
	for name := range e.running {
		if !wanted[name] {
			e.stop(name)
		}
	}
	return nil
}

// sameButDelay reports whether two settings differ in the delivery delay
// at most, which a running hub can take in place.
func sameButDelay(a, b config.EmbeddedHub) bool {
	a.DeliveryDelay, b.DeliveryDelay = 0, 0
	return a == b
}

func hubOptions(cfg config.EmbeddedHub) hub.Options {
	return hub.Options{
		MaxMessageSize:    cfg.MaxMessageSize,
		DeliveryDelay:     cfg.DeliveryDelay,
		AccessKey:         string(cfg.AccessKey),
		Units:             cfg.Units,
		ConnectionQuota:   cfg.ConnectionQuota,
		MessageRateLimit:  cfg.MessageRateLimit,
		RedirectNegotiate: cfg.RedirectNegotiate,
	}
}

func (e *embeddedHubs) start(name string, cfg config.EmbeddedHub) error {
	reg := prometheus.NewRegistry()
	opts := hubOptions(cfg)
	opts.Logger = e.log.With().Str("hub", name).Logger()
	h, err := hub.New(opts, prometheus.WrapRegistererWith(prometheus.Labels{"target": name}, reg))
	if err != nil {
		return fmt.Errorf("embedded hub for target %q: %w", name, err)
	}
	srv, err := hub.Start(e.ctx, "127.0.0.1:0", h)
	if err != nil {
		h.Close()
		return fmt.Errorf("embedded hub for target %q: %w", name, err)
	}
	e.running[name] = &embeddedHub{hub: h, srv: srv, reg: reg, cfg: cfg}
	e.load(name, h.Load)
	e.log.Info().Str("target", name).Str("url", srv.URL()).Msg("embedded reference hub listening")
	return nil
}

func (e *embeddedHubs) stop(name string) {
	cur := e.running[name]
	delete(e.running, name)
	e.drop(name)
	cur.hub.Close()
	cur.srv.Close()
}

// url is the address scenarios use to reach an embedded target.
func (e *embeddedHubs) url(target string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, ok := e.running[target]
	if !ok {
		return "", false
	}
	return cur.srv.URL(), true
}

// connectionString is the connection string of an embedded target's
// emulated service; ok is false without an access key. It holds the key.
func (e *embeddedHubs) connectionString(target string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, ok := e.running[target]
	if !ok || cur.cfg.AccessKey == "" {
		return "", false
	}
	return cur.srv.ConnectionString(), true
}

// Gather makes the hubs' own metrics part of /metrics.
func (e *embeddedHubs) Gather() ([]*dto.MetricFamily, error) {
	e.mu.Lock()
	gs := make(prometheus.Gatherers, 0, len(e.running))
	for _, cur := range e.running {
		gs = append(gs, cur.reg)
	}
	e.mu.Unlock()
	return gs.Gather()
}

func (e *embeddedHubs) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for name := range e.running {
		e.stop(name)
	}
}
