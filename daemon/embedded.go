package daemon

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
)

// loadSink is told the load of every embedded hub while it runs, so it can
// be exported per target (exporter.Metrics is one).
type loadSink interface {
	SetServerLoadSource(target string, load func() float64)
	RemoveServerLoadSource(target string)
}

// embeddedHubs runs one reference hub on loopback for every target with
// embedded: true, and keeps them in step with the config across reloads.
type embeddedHubs struct {
	ctx  context.Context
	log  zerolog.Logger
	sink loadSink
	// eventHandler is the URL template the hubs of Web PubSub targets send
	// user events to; empty sends none.
	eventHandler string

	mu      sync.Mutex
	running map[string]*embeddedHub
}

type embeddedHub struct {
	hub     *hub.Hub
	srv     *hub.Server
	reg     *prometheus.Registry
	cfg     config.EmbeddedHub
	service string
	opts    hub.Options // what the hub was started with
}

// webPubSubKey is the access key of the hubs of Web PubSub targets whose
// config names none: random, once per process, so the hub, the tokens
// hubprobe mints for it and its event handler's signature check agree
// without a key in any file or output.
var webPubSubKey = sync.OnceValue(func() string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	return base64.RawStdEncoding.EncodeToString(raw)
})

// newEmbeddedHubs runs no hub until Sync. The hubs serve until ctx ends or
// Close; sink may be nil when nobody exports their load.
func newEmbeddedHubs(ctx context.Context, log zerolog.Logger, sink loadSink) *embeddedHubs {
	return &embeddedHubs{ctx: ctx, log: log, sink: sink, running: map[string]*embeddedHub{}}
}

// SetWebPubSubEventHandler points the hubs of Web PubSub targets that
// start from now on at the event handler URL template (with {hub}, as
// hub.Options.WebPubSubEventHandler takes it): hubprobe's own handler, so
// the upstream echo runs with no setup. Call it before the first Sync.
func (e *embeddedHubs) SetWebPubSubEventHandler(template string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.eventHandler = template
}

// Sync starts hubs for new embedded targets, stops those no longer wanted,
// and applies a changed delivery delay in place; any other change restarts
// the hub.
func (e *embeddedHubs) Sync(cfg *config.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	wanted := map[string]bool{}
	for _, t := range cfg.Targets {
		if !t.Embedded {
			continue
		}
		wanted[t.Name] = true
		if cur, ok := e.running[t.Name]; ok {
			if cur.service == t.Service && sameButDelay(cur.cfg, t.EmbeddedHub) {
				cur.hub.SetDeliveryDelay(t.EmbeddedHub.DeliveryDelay)
				cur.cfg = t.EmbeddedHub
				continue
			}
			e.stop(t.Name)
		}
		if err := e.start(t); err != nil {
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

// HubOptions are the hub options an embedded_hub section of the config
// asks for (`hubprobe hub` takes the same settings as flags); the Logger
// and the timeouts are left to the caller.
func HubOptions(cfg config.EmbeddedHub) hub.Options {
	return hub.Options{
		MaxMessageSize:    cfg.MaxMessageSize,
		DeliveryDelay:     cfg.DeliveryDelay,
		AccessKey:         string(cfg.AccessKey),
		Units:             cfg.Units,
		ConnectionQuota:   cfg.ConnectionQuota,
		MessageRateLimit:  cfg.MessageRateLimit,
		RedirectNegotiate: cfg.RedirectNegotiate,
		EntraIssuer:       cfg.EntraIssuer,
		DisableLocalAuth:  cfg.DisableLocalAuth,
		DropEvery:         cfg.DropEvery,
		DropHow:           hub.Drill(cfg.Drop),
		IdleTimeout:       cfg.IdleTimeout,
	}
}

func (e *embeddedHubs) start(t config.Target) error {
	name, cfg := t.Name, t.EmbeddedHub
	reg := prometheus.NewRegistry()
	opts := HubOptions(cfg)
	opts.Logger = e.log.With().Str("hub", name).Logger()
	if t.WebPubSub() {
		opts.WebPubSubEventHandler = e.eventHandler
		if opts.AccessKey == "" {
			opts.AccessKey = webPubSubKey()
		}
	}
	h, err := hub.New(opts, prometheus.WrapRegistererWith(prometheus.Labels{"target": name}, reg))
	if err != nil {
		return fmt.Errorf("embedded hub for target %q: %w", name, err)
	}
	srv, err := hub.Start(e.ctx, "127.0.0.1:0", h)
	if err != nil {
		h.Close()
		return fmt.Errorf("embedded hub for target %q: %w", name, err)
	}
	e.running[name] = &embeddedHub{hub: h, srv: srv, reg: reg, cfg: cfg, service: t.Service, opts: opts}
	if e.sink != nil {
		e.sink.SetServerLoadSource(name, h.Load)
	}
	e.log.Info().Str("target", name).Str("url", srv.URL()).Msg("embedded reference hub listening")
	return nil
}

func (e *embeddedHubs) stop(name string) {
	cur := e.running[name]
	delete(e.running, name)
	if e.sink != nil {
		e.sink.RemoveServerLoadSource(name)
	}
	cur.hub.Close()
	cur.srv.Close()
}

// URL is the address scenarios use to reach an embedded target.
func (e *embeddedHubs) URL(target string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, ok := e.running[target]
	if !ok {
		return "", false
	}
	return cur.srv.URL(), true
}

// ConnectionString is the connection string of an embedded target's
// emulated service; ok is false without the emulation (which a Web PubSub
// target always has). It holds the key, unless it is the keyless form of
// a hub that takes Entra tokens only (hub.Server.ConnectionString).
func (e *embeddedHubs) ConnectionString(target string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, ok := e.running[target]
	if !ok || !cur.opts.EmulatesAzure() {
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

// Close stops every hub.
func (e *embeddedHubs) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for name := range e.running {
		e.stop(name)
	}
}
