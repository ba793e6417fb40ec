package scenarios_test

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/wire/corewire"
)

const resolveKey = "resolve-test-key"

// resolveTargets are a remote hub with a token and headers, an embedded
// hub, an embedded serverless hub and a service with a connection string.
var resolveTargets = []config.Target{
	{Name: "remote", URL: "https://hub.example/chat", AccessToken: "remote-token", SkipNegotiation: true,
		Headers: map[string]string{"x-team": "canary"}},
	{Name: "local", Embedded: true},
	{Name: "local-service", Embedded: true, Mode: config.TargetModeServerless, Hub: "signalrbench", RESTAPIVersion: "2022-06-01",
		EmbeddedHub: config.EmbeddedHub{AccessKey: resolveKey}},
	{Name: "service", Mode: config.TargetModeServerless, Hub: "chat",
		ConnectionString: "Endpoint=https://one.service.signalr.net;AccessKey=" + resolveKey + ";Version=1.0;"},
}

func resolveConfig(targets ...config.Target) *config.Config {
	cfg := &config.Config{Targets: targets}
	for _, t := range targets {
		s := scenario("echo", 1, 0, 0)
		s.Name, s.Target = "echo-"+t.Name, t.Name
		cfg.Scenarios = append(cfg.Scenarios, s)
	}
	return cfg
}

// embeddedHubs are reference hubs by target: the resolver's EmbeddedHubs,
// as the daemon's are.
type embeddedHubs map[string]*hub.Server

// startEmbedded serves a hub for each embedded target of cfg, with the
// access key of its embedded_hub section, until the test ends.
func startEmbedded(t *testing.T, cfg *config.Config) embeddedHubs {
	t.Helper()
	hubs := embeddedHubs{}
	for _, target := range cfg.Targets {
		if target.Embedded {
			hubs[target.Name] = hubtest.Start(t, hub.Options{AccessKey: string(target.EmbeddedHub.AccessKey)})
		}
	}
	return hubs
}

func (h embeddedHubs) URL(target string) (string, bool) {
	srv, ok := h[target]
	if !ok {
		return "", false
	}
	return srv.URL(), true
}

func (h embeddedHubs) ConnectionString(target string) (string, bool) {
	srv, ok := h[target]
	if !ok || srv.ConnectionString() == "" {
		return "", false
	}
	return srv.ConnectionString(), true
}

func newResolver(t *testing.T, cfg *config.Config) (scenarios.Resolver, embeddedHubs) {
	t.Helper()
	hubs := startEmbedded(t, cfg)
	return scenarios.Resolver{Hubs: hubs, Recorder: scenarios.Discarding, Logger: zerolog.Nop()}, hubs
}

func TestResolverBindsEveryScenarioToItsTarget(t *testing.T) {
	cfg := resolveConfig(resolveTargets...)
	r, hubs := newResolver(t, cfg)
	jobs, err := r.Jobs(cfg)
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%d jobs (%v), want 4", len(jobs), err)
	}
	for i, j := range jobs {
		if j.Target != &cfg.Targets[i] || j.Runner.Scenario.Name != cfg.Scenarios[i].Name || j.Runner.Recorder == nil {
			t.Errorf("job %d: target %p, scenario %q, recorder %v", i, j.Target, j.Runner.Scenario.Name, j.Runner.Recorder)
		}
	}
	remote := coreTarget(t, jobs[0])
	if remote.URL != "https://hub.example/chat" || remote.AccessToken != "remote-token" || !remote.SkipNegotiation ||
		remote.Headers.Get("X-Team") != "canary" || remote.Serverless != nil {
		t.Errorf("remote endpoint %+v", remote)
	}
	if url, _ := hubs.URL("local"); coreTarget(t, jobs[1]).URL != url || url == "" {
		t.Errorf("embedded endpoint %q, want the hub's %q", coreTarget(t, jobs[1]).URL, url)
	}
	origin, _, _ := strings.Cut(strings.TrimPrefix(mustEndpointURL(t, hubs, "local-service"), "http://"), "/")
	if s := coreTarget(t, jobs[2]).Serverless; s == nil || s.Hub != "signalrbench" || s.RESTAPIVersion != "2022-06-01" ||
		s.ConnectionString.Endpoint() != "http://"+origin || string(s.ConnectionString.AccessKey()) != resolveKey {
		t.Errorf("embedded serverless endpoint %+v, want the hub at %s with its key", s, origin)
	}
	if s := coreTarget(t, jobs[3]).Serverless; s == nil || s.Hub != "chat" || s.ConnectionString.Endpoint() != "https://one.service.signalr.net" {
		t.Errorf("service endpoint %+v", s)
	}
}

// coreTarget is what j's runs reach over the ASP.NET Core SignalR wire.
func coreTarget(t *testing.T, j scenarios.Job) corewire.Target {
	t.Helper()
	w, ok := j.Runner.Endpoint.Wire.(corewire.Wire)
	if !ok {
		t.Fatalf("scenario %q resolved to the %s wire", j.Runner.Scenario.Name, j.Runner.Endpoint.Wire.Spec().Service)
	}
	return w.Target
}

func mustEndpointURL(t *testing.T, hubs embeddedHubs, target string) string {
	t.Helper()
	url, ok := hubs.URL(target)
	if !ok {
		t.Fatalf("no embedded hub for %q", target)
	}
	return url
}

// resolveFailures are targets that cannot be resolved and what the error
// must say.
var resolveFailures = []struct {
	target config.Target
	hubs   bool // whether the embedded hubs run
	want   string
}{
	{config.Target{Name: "local", Embedded: true}, false, `target "local": embedded hub is not running`},
	{config.Target{Name: "local", Embedded: true, Mode: config.TargetModeServerless}, true, `target "local": embedded hub has no access key`},
	{config.Target{Name: "service", Mode: config.TargetModeServerless, ConnectionString: "AccessKey=" + resolveKey + ";Version=1.0;"},
		true, `target "service": azure: connection string: Endpoint`},
}

// Errors name the target and the key at fault, never the secret.
func TestResolverRefusesWhatItCannotReach(t *testing.T) {
	for _, c := range resolveFailures {
		cfg := resolveConfig(c.target)
		r, _ := newResolver(t, cfg)
		if !c.hubs {
			r.Hubs = nil
		}
		_, err := r.Jobs(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), resolveKey) {
			t.Errorf("%s: error %v, want one with %q and without the key", c.target.Name, err, c.want)
		}
	}
	cfg := resolveConfig(resolveTargets[0])
	cfg.Scenarios[0].Target = "nowhere"
	r, _ := newResolver(t, cfg)
	if _, err := r.Job(cfg, cfg.Scenarios[0]); err == nil || err.Error() != `scenario "echo-remote": unknown target "nowhere"` {
		t.Errorf("unknown target: %v", err)
	}
}
