package scenarios

import (
	"fmt"
	"net/http"
	neturl "net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
	"github.com/hubprobe/hubprobe/scenarios/wire/classicwire"
	"github.com/hubprobe/hubprobe/scenarios/wire/corewire"
	"github.com/hubprobe/hubprobe/scenarios/wire/wpswire"
)

// EmbeddedHubs finds the reference hubs hubprobe runs itself for targets
// with embedded: true (the daemon's are).
type EmbeddedHubs interface {
	// URL is the hub's base URL; ok is false when no hub runs for target.
	URL(target string) (url string, ok bool)
	// ConnectionString is the connection string of the hub's emulated
	// service; ok is false without an access key.
	ConnectionString(target string) (cs string, ok bool)
}

// Job is one scenario resolved against its target, ready to run on its
// schedule.
type Job struct {
	Runner *Runner
	// Target is what the runner's endpoint was resolved from: a change to
	// it restarts the job as a change to the scenario does.
	Target *config.Target
}

// Resolver turns the scenarios of a config into jobs: each bound to the
// endpoint its target resolves to and to the recorder its runs report to.
type Resolver struct {
	// Hubs finds the embedded hubs; it may be nil when no target is embedded.
	Hubs EmbeddedHubs
	// Recorder gives the recorder of a scenario's runs.
	Recorder func(config.Scenario) Recorder
	Logger   zerolog.Logger
	// Pauses gives each target the Pause its scenarios share; nil leaves
	// every run its own.
	Pauses *Pauses
	// Credentials signs in the targets whose connection strings name an
	// AuthType, one credential per sign-in kept across runs; nil builds
	// a credential for every resolve.
	Credentials *azure.Credentials
	// Shard is this process's part of every scenario.
	Shard Shard
}

// Jobs resolves every scenario of cfg, in order.
func (r Resolver) Jobs(cfg *config.Config) ([]Job, error) {
	jobs := make([]Job, 0, len(cfg.Scenarios))
	for _, s := range cfg.Scenarios {
		j, err := r.Job(cfg, s)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// Job resolves one scenario of cfg.
func (r Resolver) Job(cfg *config.Config, s config.Scenario) (Job, error) {
	t, ok := cfg.Target(s.Target)
	if !ok {
		return Job{}, fmt.Errorf("scenario %q: unknown target %q", s.Name, s.Target)
	}
	ep, err := r.Endpoint(t)
	if err != nil {
		return Job{}, err
	}
	return Job{Target: t, Runner: &Runner{
		Scenario: s,
		Endpoint: ep,
		Recorder: r.Recorder(s),
		Logger:   r.Logger.With().Str("target", s.Target).Str("scenario", s.Name).Logger(),
		Shard:    r.Shard,
	}}, nil
}

// wires are the Specs of every wire a target can resolve to (see
// Endpoint): what Kinds reads.
var wires = []wire.Spec{corewire.Spec, classicwire.Spec, wpswire.Spec}

// Endpoint is where and how runs reach target t: the wire of its service,
// and its Pause.
func (r Resolver) Endpoint(t *config.Target) (Endpoint, error) {
	ep := Endpoint{}
	if r.Pauses != nil {
		ep.Pause = r.Pauses.For(t.Name)
	}
	url, headers := t.URL, http.Header{}
	for k, v := range t.Headers {
		headers.Set(k, v)
	}
	if t.Embedded {
		var ok bool
		if url, ok = r.embeddedURL(t.Name); !ok {
			return ep, fmt.Errorf("target %q: embedded hub is not running", t.Name)
		}
		if t.AspNet() {
			url = classicURL(url)
		}
	}
	var err error
	switch {
	case t.AspNet():
		ep.Wire = classicwire.New(classicwire.Target{URL: url, AccessToken: string(t.AccessToken), Headers: headers, Hub: t.Hub})
	case t.WebPubSub():
		ep.Wire, err = r.webPubSubWire(t, headers)
	default:
		ep.Wire, err = r.signalRWire(t, url, headers)
	}
	return ep, err
}

// signalRWire reaches an ASP.NET Core SignalR hub, or Azure SignalR
// Service in serverless mode.
func (r Resolver) signalRWire(t *config.Target, url string, headers http.Header) (wire.Wire, error) {
	target := corewire.Target{URL: url, AccessToken: string(t.AccessToken), Headers: headers, SkipNegotiation: t.SkipNegotiation}
	if t.Serverless() {
		cs, cred, err := r.signIn(t)
		if err != nil {
			return nil, err
		}
		target.Serverless = &corewire.Serverless{ConnectionString: cs, Credential: cred, Hub: t.Hub, RESTAPIVersion: t.RESTAPIVersion}
	}
	return corewire.New(target), nil
}

// webPubSubWire reaches an Azure Web PubSub hub.
func (r Resolver) webPubSubWire(t *config.Target, headers http.Header) (wire.Wire, error) {
	cs, cred, err := r.signIn(t)
	if err != nil {
		return nil, err
	}
	return wpswire.New(wpswire.Target{ConnectionString: cs, Credential: cred, Hub: t.Hub, Headers: headers}), nil
}

// EventHandlerKeys lists the hub of every job's Web PubSub target with its
// access key: what hubprobe's event handler checks ce-signature against.
// Targets sharing a hub name each add their key.
func EventHandlerKeys(jobs []Job) map[string][]string {
	keys := map[string][]string{}
	for _, j := range jobs {
		if w, ok := j.Runner.Endpoint.Wire.(wpswire.Wire); ok {
			keys[w.Target.Hub] = append(keys[w.Target.Hub], w.EventHandlerKey())
		}
	}
	return keys
}

// signIn is the connection string of t and, when it names an AuthType,
// the Entra ID credential it signs in with.
func (r Resolver) signIn(t *config.Target) (azure.ConnectionString, azcore.TokenCredential, error) {
	cs, err := r.connectionString(t)
	if err != nil || !cs.Entra() {
		return cs, nil, err
	}
	creds := r.Credentials
	if creds == nil {
		creds = &azure.Credentials{}
	}
	cred, err := creds.For(cs)
	if err != nil {
		return cs, nil, fmt.Errorf("target %q: %w", t.Name, err)
	}
	return cs, cred, nil
}

func (r Resolver) embeddedURL(target string) (string, bool) {
	if r.Hubs == nil {
		return "", false
	}
	return r.Hubs.URL(target)
}

// connectionString is what serverless mode and Web PubSub targets reach
// the service with: the target's own connection string or, for an
// embedded target, its hub's emulated service. Errors name the target and
// the key at fault, never the string.
func (r Resolver) connectionString(t *config.Target) (azure.ConnectionString, error) {
	raw := string(t.ConnectionString)
	if t.Embedded {
		var ok bool
		if raw, ok = r.Hubs.ConnectionString(t.Name); !ok {
			return azure.ConnectionString{}, fmt.Errorf("target %q: embedded hub has no access key", t.Name)
		}
	}
	cs, err := azure.ParseConnectionString(raw)
	if err != nil {
		return cs, fmt.Errorf("target %q: %w", t.Name, err)
	}
	return cs, nil
}

// classicURL is where the embedded hub at url serves classic ASP.NET
// SignalR: the same origin, at config.EmbeddedAspNetPath.
func classicURL(hubURL string) string {
	u, err := neturl.Parse(hubURL)
	if err != nil {
		return hubURL
	}
	u.Path, u.RawPath, u.RawQuery = config.EmbeddedAspNetPath, "", ""
	return u.String()
}
