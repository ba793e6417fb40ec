// Package config holds hubprobe's configuration: the YAML schema, its
// defaults, strict decoding with errors that name file, line and key,
// validation, secrets and safe reloading.
package config

import (
	_ "embed" // for DefaultYAML
	"maps"
	"slices"
	"time"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/internal/yamldecode"
	"github.com/hubprobe/hubprobe/slo"
	"github.com/hubprobe/hubprobe/tiers"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Config is the whole configuration file.
type Config struct {
	Global    Global     `yaml:"global"`
	Targets   []Target   `yaml:"targets"`
	Scenarios []Scenario `yaml:"scenarios"`
}

// Global holds settings that apply to every scenario.
type Global struct {
	// StartJitter delays each scenario's first run by a random offset within
	// its schedule interval, so scenarios do not all hit the hub at once.
	StartJitter bool `yaml:"start_jitter"`
}

// Target is a hub that scenarios run against.
type Target struct {
	Name string `yaml:"name"`
	// Service is the kind of hub, which decides the wire every scenario
	// of the target speaks: ServiceSignalR (an ASP.NET Core SignalR app
	// server or Azure SignalR Service), ServiceAspNetSignalR (a classic
	// ASP.NET SignalR 2.x app server, or Azure SignalR Service in ASP.NET
	// mode behind one) or ServiceWebPubSub (Azure Web PubSub). After Load
	// it is always set.
	Service string `yaml:"service,omitempty"`
	// URL is the hub endpoint (http, https, ws or wss). Exclusive with Embedded.
	URL string `yaml:"url,omitempty"`
	// Embedded starts the reference hub in-process and probes it.
	Embedded bool `yaml:"embedded,omitempty"`
	// EmbeddedHub tunes the in-process hub; only allowed with Embedded.
	EmbeddedHub EmbeddedHub `yaml:"embedded_hub,omitempty"`
	// AccessToken is sent as a bearer token. After Load it holds the
	// resolved value, whether written inline (with ${ENV} expanded) or read
	// from AccessTokenFile.
	AccessToken Secret `yaml:"access_token,omitempty"`
	// AccessTokenFile is resolved against the config file's directory.
	AccessTokenFile string            `yaml:"access_token_file,omitempty"`
	Headers         map[string]string `yaml:"headers,omitempty"`
	// SkipNegotiation connects the transport directly (WebSockets only).
	SkipNegotiation bool `yaml:"skip_negotiation,omitempty"`
	// ConnectionString reaches Azure SignalR Service directly (serverless
	// mode). After Load it holds the resolved value, whether written inline
	// (with ${ENV} expanded) or read from ConnectionStringFile.
	ConnectionString Secret `yaml:"connection_string,omitempty"`
	// ConnectionStringFile is resolved against the config file's directory.
	ConnectionStringFile string `yaml:"connection_string_file,omitempty"`
	// Hub is the hub name on the service; required with ConnectionString.
	// For an embedded target in serverless mode it defaults to the
	// embedded hub's own name, for an embedded Web PubSub target to
	// EmbeddedWebPubSubHub. On a classic ASP.NET SignalR target it is the
	// hub the connections subscribe to, AspNetHubName by default.
	Hub string `yaml:"hub,omitempty"`
	// Mode is TargetModeDefault or TargetModeServerless; after Load it is
	// always set on a SignalR target and empty on a Web PubSub one, which
	// has no modes.
	Mode string `yaml:"mode,omitempty"`
	// RESTAPIVersion selects the service's REST API in serverless mode:
	// "v1" (the default) or "2022-06-01". Empty for other targets after Load.
	RESTAPIVersion string `yaml:"rest_api_version,omitempty"`
	// Tier declares the hub's service tier, whose published limits hubprobe
	// exports so that usage can be compared with them.
	Tier *Tier `yaml:"tier,omitempty"`
	// AzureMonitor reads the service's own server load and usage from
	// Azure Monitor.
	AzureMonitor *AzureMonitor `yaml:"azure_monitor,omitempty"`
	// SLO sets the objective of the target's scenarios (see SLO).
	SLO *SLO `yaml:"slo,omitempty"`
}

// AzureMonitor names the Azure resource behind a target, whose metrics
// hubprobe reads from Azure Monitor.
type AzureMonitor struct {
	// ResourceID is the Azure SignalR Service or Web PubSub resource's ARM
	// id, or one of its geo-replicas'.
	ResourceID string `yaml:"resource_id"`
	// Endpoint is Azure Resource Manager's, https; a sovereign cloud's or
	// Azure Stack Hub's where the resource lives there. Load trims a
	// trailing slash.
	Endpoint string `yaml:"endpoint"`
	// Interval is how often the metrics are read, and their time grain.
	Interval time.Duration `yaml:"interval"`
}

// AzureMonitorIntervals are the time grains Azure Monitor aggregates the
// services' metrics to, the values interval accepts.
var AzureMonitorIntervals = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour}

// EmbeddedHub configures the in-process reference hub.
type EmbeddedHub struct {
	// DeliveryDelay holds every delivery back, to rehearse alerts.
	DeliveryDelay time.Duration `yaml:"delivery_delay"`
	// MaxMessageSize is the largest incoming message the hub accepts, in bytes.
	MaxMessageSize int64 `yaml:"max_message_size"`
	// AccessKey makes the hub emulate Azure SignalR Service too: client
	// endpoints and REST API checking tokens signed with it. After Load it
	// holds the value with ${ENV} expanded.
	AccessKey Secret `yaml:"access_key,omitempty"`
	// Units sets the connection quota to 1,000 per unit, as the service's
	// Standard tier does; 0 means no quota.
	Units int `yaml:"units,omitempty"`
	// ConnectionQuota overrides the quota Units gives; 0 keeps it.
	ConnectionQuota int `yaml:"connection_quota,omitempty"`
	// MessageRateLimit caps the messages the hub accepts per second; 0 means
	// no cap.
	MessageRateLimit float64 `yaml:"message_rate_limit,omitempty"`
	// RedirectNegotiate makes the hub's negotiate redirect to its emulated
	// service, as an app server in the service's default mode does; needs
	// AccessKey.
	RedirectNegotiate bool `yaml:"redirect_negotiate,omitempty"`
	// EntraIssuer makes the hub accept Microsoft Entra ID bearer tokens
	// from this OpenID issuer (an https URL) on the REST APIs and
	// :generateToken; the hub's Options.EntraIssuer.
	EntraIssuer string `yaml:"entra_issuer,omitempty"`
	// DisableLocalAuth refuses every token signed with the access key, as a
	// service with disableLocalAuth does; needs EntraIssuer.
	DisableLocalAuth bool `yaml:"disable_local_auth,omitempty"`
	// DropEvery makes the hub end one connection every DropEvery, as Drop
	// says (one of Drills), so that held connections show their drops: a
	// standing drill. 0 never.
	DropEvery time.Duration `yaml:"drop_every,omitempty"`
	Drop      string        `yaml:"drop,omitempty"`
	// IdleTimeout cuts a connection whose client sent nothing, not even a
	// ping, for this long, as a load balancer's idle timeout would; 0
	// never.
	IdleTimeout time.Duration `yaml:"idle_timeout,omitempty"`
}

// Drills are how an embedded hub's standing drill ends a connection: a
// close with an error, a close allowing reconnect, the protocol's
// disconnect, the socket cut, or a restart that cuts every connection and
// refuses new ones for two seconds.
var Drills = []string{"close_error", "close_reconnect", "disconnect", "abort", "restart"}

// Target modes: how clients reach the hub.
const (
	// TargetModeDefault: clients negotiate with the hub at url (or the
	// embedded hub's path); an app server of Azure SignalR Service in
	// default mode redirects them to the service.
	TargetModeDefault = "default"
	// TargetModeServerless: hubprobe mints client tokens from the
	// connection string (or the embedded hub's access key) and connects
	// straight to the service's client endpoint, each client as its own
	// user; rest_* kinds send through the service's REST API.
	TargetModeServerless = "serverless"
)

// TargetModes lists the values a target's mode accepts; RESTAPIVersions the
// values of rest_api_version.
var (
	TargetModes     = []string{TargetModeDefault, TargetModeServerless}
	RESTAPIVersions = []string{"v1", "2022-06-01"}
)

// DefaultRESTAPIVersion is the REST API a serverless target uses unless
// rest_api_version says otherwise.
const DefaultRESTAPIVersion = "v1"

// AspNetHubName is the hub a classic ASP.NET SignalR target's connections
// subscribe to unless its hub names another: the benchmark's classic app
// server's Signalrbench, which the embedded hub serves at
// EmbeddedAspNetPath.
const (
	AspNetHubName      = "Signalrbench"
	EmbeddedAspNetPath = "/signalr"
)

// EmbeddedHubName is the embedded hub's name on its emulated service: the
// last segment of its path, /signalrbench.
const EmbeddedHubName = "signalrbench"

// Serverless reports whether hubprobe reaches the target in serverless mode.
func (t Target) Serverless() bool { return t.Mode == TargetModeServerless }

// Services: what kind of hub a target is. The names are the tier tables'
// service names, so a target's tier and its service are spelled alike.
const (
	ServiceSignalR   = tiers.SignalR
	ServiceWebPubSub = tiers.WebPubSub
	// ServiceAspNetSignalR is the classic ASP.NET SignalR (2.x) protocol.
	// Azure SignalR Service serves it in ASP.NET mode with the same tiers
	// as ASP.NET Core SignalR, so it has no tier table of its own: its
	// tier and profile name ServiceSignalR (TierService).
	ServiceAspNetSignalR = "aspnet_signalr"
)

// Services lists the values a target's service accepts.
var Services = []string{ServiceSignalR, ServiceWebPubSub, ServiceAspNetSignalR}

// WebPubSub reports whether the target is an Azure Web PubSub hub.
func (t Target) WebPubSub() bool { return t.Service == ServiceWebPubSub }

// AspNet reports whether the target speaks classic ASP.NET SignalR.
func (t Target) AspNet() bool { return t.Service == ServiceAspNetSignalR }

// TierService is the service whose published tier table applies to the
// target: a classic ASP.NET SignalR target reaches Azure SignalR Service,
// whose tiers are the same in ASP.NET mode.
func (t Target) TierService() string {
	if t.AspNet() {
		return ServiceSignalR
	}
	return t.Service
}

// EmbeddedWebPubSubHub is the hub name of an embedded Web PubSub target
// that names none.
const EmbeddedWebPubSubHub = "hubprobe"

// Kinds is what the scenario registry tells validation: every scenario
// kind, and the services whose wire it runs on. A nil Kinds skips the
// kind checks.
type Kinds map[string][]string

// names lists the kinds, sorted; nil for a nil Kinds.
func (k Kinds) names() []string {
	if k == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(k))
}

// runsOn reports whether kind runs on service; a nil Kinds says yes.
func (k Kinds) runsOn(kind, service string) bool {
	return k == nil || slices.Contains(k[kind], service)
}

// forService lists the kinds that run on service, sorted.
func (k Kinds) forService(service string) []string {
	var out []string
	for _, name := range k.names() {
		if k.runsOn(name, service) {
			out = append(out, name)
		}
	}
	return out
}

// RESTKindPrefix starts the name of every scenario kind that sends through
// the service's REST API; those kinds need a serverless target, and the
// others (which invoke hub methods, refused in serverless mode) a default one.
const RESTKindPrefix = "rest_"

// Scenario is one scheduled benchmark run against a target.
type Scenario struct {
	Name   string `yaml:"name"`
	Target string `yaml:"target"`
	// Kind selects the scenario implementation; the valid kinds are passed
	// to Load by the caller that owns the registry.
	Kind string `yaml:"kind"`
	// Schedule is a robfig/cron/v3 standard spec or descriptor ("@every 30s").
	Schedule string `yaml:"schedule"`
	// Timeout bounds a whole run: connect, send for Duration, wait for late
	// deliveries, close.
	Timeout            time.Duration `yaml:"timeout"`
	Duration           time.Duration `yaml:"duration"`
	Connections        int           `yaml:"connections"`
	ConnectConcurrency int           `yaml:"connect_concurrency"`
	ConnectTimeout     time.Duration `yaml:"connect_timeout"`
	MessageSize        int           `yaml:"message_size"`
	SendInterval       time.Duration `yaml:"send_interval"`
	// Senders is how many connections send; 0 means all of them.
	Senders   int `yaml:"senders"`
	GroupSize int `yaml:"group_size"`
	// BatchSize is how many messages the hub pushes for each request of a
	// server_push scenario.
	BatchSize int `yaml:"batch_size"`
	// LossTimeout is how long after the last send a delivery may still
	// arrive before it counts as lost.
	LossTimeout time.Duration `yaml:"loss_timeout"`
	// MaxSendLag is how late the pacer may fall behind its schedule: a run
	// whose send lag p99 passes it, or that could not make every send
	// within its window plus this, is inconclusive (the probe, not the
	// hub, gave out).
	MaxSendLag time.Duration `yaml:"max_send_lag"`
	Transport  string        `yaml:"transport"`
	// FallbackTransports are tried in order only when the hub does not offer
	// Transport; without them a missing transport fails the run.
	FallbackTransports []string `yaml:"fallback_transports,omitempty"`
	// Protocol is the SignalR hub protocol, or on a Web PubSub target the
	// WebSocket subprotocol (one of WebPubSubProtocols, by default the
	// plain JSON one).
	Protocol        string        `yaml:"protocol"`
	StreamItemDelay time.Duration `yaml:"stream_item_delay"`
	// Profile sizes the scenario from a row of a published tier table,
	// scaled down; settings written next to it override what it gives.
	Profile *Profile `yaml:"profile,omitempty"`
	// Mode is ModeRun or ModeCapacitySearch.
	Mode string `yaml:"mode"`
	// CapacitySearch tunes ModeCapacitySearch; after Load it is set
	// exactly when Mode is ModeCapacitySearch.
	CapacitySearch *CapacitySearch `yaml:"capacity_search,omitempty"`
	// Held tunes a scenario of KindHeld; after Load it is set exactly
	// when Kind is KindHeld.
	Held *Held `yaml:"held,omitempty"`
	// SLO sets the scenario's objective, over its target's (see SLO).
	SLO *SLO `yaml:"slo,omitempty"`
	// Objective is the scenario's objective after Load: its slo: keys,
	// else its target's, else slo.Default.
	Objective slo.Objective `yaml:"-"`
}

// KindHeld is the scenario kind whose connections live as long as the
// daemon runs, each running the echo kind's exchange on its own schedule.
const KindHeld = "held"

// Held tunes a held scenario.
type Held struct {
	// ReportInterval is how often the held connections' measurements are
	// reported as one run, with a run page of its own.
	ReportInterval time.Duration `yaml:"report_interval"`
}

// Bounds of held.report_interval: a report's messages must have arrived
// or counted lost before the next report, and one run page a second
// would be noise.
const (
	MinHeldReportInterval = 10 * time.Second
	MaxHeldReportInterval = time.Hour
)

// Scenario modes.
const (
	// ModeRun sends at one fixed rate for duration: the canary.
	ModeRun = "run"
	// ModeCapacitySearch ramps the number of sending connections up step by
	// step until the hub leaves the capacity definition, as the vendors'
	// benchmark does; the last step that held is the capacity.
	ModeCapacitySearch = "capacity_search"
)

// Modes lists the values mode accepts.
var Modes = []string{ModeRun, ModeCapacitySearch}

// CapacitySearch is the step method of the vendors' benchmark: start with
// BaseSending connections sending, add Step more every StepDuration.
type CapacitySearch struct {
	BaseSending  int           `yaml:"base_sending"`
	Step         int           `yaml:"step"`
	StepDuration time.Duration `yaml:"step_duration"`
	// MaxSteps bounds the ramp; 0 ramps until every connection sends.
	MaxSteps int `yaml:"max_steps"`
}

// Steps is how many steps the ramp has at most with the given connections.
func (c CapacitySearch) Steps(connections int) int {
	if c.Step < 1 || c.BaseSending > connections {
		return 0
	}
	n := (connections-c.BaseSending)/c.Step + 1
	if c.MaxSteps > 0 {
		n = min(n, c.MaxSteps)
	}
	return n
}

// Senders is how many connections send in step i (0-based).
func (c CapacitySearch) Senders(i int) int { return c.BaseSending + i*c.Step }

// Limits and fixed choices that validation enforces.
const (
	MaxConnections     = 100000
	MaxMessageSize     = 1 << 20
	DefaultGroupSize   = 10
	DefaultTimeoutPad  = 10 * time.Second // added to the phases to get the default timeout
	DefaultHubMaxBytes = 32768
	DefaultBatchSize   = 100
	MaxBatchSize       = 100000
	MaxUnits           = 1000 // the service's largest tier
	MaxConnectionQuota = 1000000
)

// Transports and Protocols list the values that transport and protocol
// accept on a SignalR target; WebPubSubProtocols the subprotocols that
// protocol names on a Web PubSub target, whose transport is always
// WebSockets. A classic ASP.NET SignalR target takes AspNetTransports,
// JSON only.
var (
	Transports         = []string{"websockets", "sse", "longpolling"}
	AspNetTransports   = []string{"websockets", "sse", "longpolling", TransportForeverFrame}
	Protocols          = []string{"json", "messagepack"}
	WebPubSubProtocols = []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable}
)

// TransportForeverFrame is classic ASP.NET SignalR's fourth transport: a
// hidden iframe's endless HTML page of <script> blocks.
const TransportForeverFrame = "foreverframe"

// AspNetTransportNames maps the names the classic JavaScript client and
// negotiate use for its transports to hubprobe's, which a classic target's
// transport and fallback_transports accept too; Load stores hubprobe's.
var AspNetTransportNames = map[string]string{
	"webSockets":       "websockets",
	"serverSentEvents": "sse",
	"longPolling":      "longpolling",
	"foreverFrame":     TransportForeverFrame,
}

// Defaults, applied before the file's values are decoded on top.
var (
	DefaultGlobal = Global{StartJitter: true}

	DefaultEmbeddedHub = EmbeddedHub{MaxMessageSize: DefaultHubMaxBytes}

	DefaultTarget = Target{EmbeddedHub: DefaultEmbeddedHub}

	DefaultAzureMonitor = AzureMonitor{Endpoint: monitor.DefaultEndpoint, Interval: monitor.DefaultInterval}

	// DefaultCapacitySearch leaves BaseSending and Step at zero: both
	// default to a tenth of the connections (at least 1), so a ramp takes
	// about ten steps whatever the size.
	DefaultCapacitySearch = CapacitySearch{StepDuration: 10 * time.Second}

	DefaultHeld = Held{ReportInterval: time.Minute}

	// DefaultScenario leaves Timeout and GroupSize at zero: their defaults
	// depend on other fields and are filled in after decoding.
	DefaultScenario = Scenario{
		Schedule:           "@every 1m",
		Duration:           10 * time.Second,
		Connections:        10,
		ConnectConcurrency: 50,
		ConnectTimeout:     15 * time.Second,
		MessageSize:        2048,
		SendInterval:       time.Second,
		LossTimeout:        5 * time.Second,
		MaxSendLag:         100 * time.Millisecond,
		BatchSize:          DefaultBatchSize,
		Transport:          "websockets",
		Protocol:           "json",
		Mode:               ModeRun,
	}
)

// MarshalYAML leaves embedded_hub out for hubs reached by URL, where it is
// not allowed, so a printed config parses again.
func (t Target) MarshalYAML() (any, error) {
	type plain Target // drops this method, avoiding recursion
	p := plain(t)
	if !p.Embedded {
		p.EmbeddedHub = EmbeddedHub{}
	}
	return p, nil
}

// SetDefaults resets the value to its defaults; the decoder calls it on every
// new list item and on an optional capacity_search section before decoding
// the file's keys on top.
func (t *Target) SetDefaults() { *t = DefaultTarget }

// SetDefaults resets the scenario to DefaultScenario, as Target.SetDefaults.
func (s *Scenario) SetDefaults() { *s = DefaultScenario }

// SetDefaults resets the search to DefaultCapacitySearch, as Target.SetDefaults.
func (c *CapacitySearch) SetDefaults() { *c = DefaultCapacitySearch }

// SetDefaults resets the section to DefaultHeld, as Target.SetDefaults.
func (h *Held) SetDefaults() { *h = DefaultHeld }

// SetDefaults resets the section to DefaultAzureMonitor, as Target.SetDefaults.
func (a *AzureMonitor) SetDefaults() { *a = DefaultAzureMonitor }

// DefaultYAML is the configuration used when no file is given: one embedded
// hub target with a declared tier, the echo, broadcast, send_to_group and
// send_to_client scenarios, and a capacity search. It is shipped as
// default.yml so users can read and copy it.
//
//go:embed default.yml
var DefaultYAML []byte

// DefaultFilename names DefaultYAML in error messages.
const DefaultFilename = "default.yml"

// Default returns a fresh copy of the embedded default configuration. Kinds
// are not checked here; callers holding the scenario registry can check them
// with Parse(DefaultYAML, DefaultFilename, kinds).
func Default() *Config {
	c, err := Parse(DefaultYAML, DefaultFilename, nil)
	if err != nil {
		panic("config: embedded default.yml is invalid: " + err.Error())
	}
	return c
}

// Target returns the target with the given name.
func (c *Config) Target(name string) (*Target, bool) {
	for i := range c.Targets {
		if c.Targets[i].Name == name {
			return &c.Targets[i], true
		}
	}
	return nil, false
}

// Scenario returns the scenario with the given name.
func (c *Config) Scenario(name string) (*Scenario, bool) {
	for i := range c.Scenarios {
		if c.Scenarios[i].Name == name {
			return &c.Scenarios[i], true
		}
	}
	return nil, false
}

// LoadOrDefault loads the file at path or, when path is empty, the embedded
// default; kinds as for Load.
func LoadOrDefault(path string, kinds Kinds) (*Config, error) {
	if path == "" {
		return Parse(DefaultYAML, DefaultFilename, kinds)
	}
	return Load(path, kinds)
}

// Load reads, decodes and validates the config file at path. kinds lists the
// valid scenario kinds; nil skips that check. Relative access_token_file
// paths are resolved against the file's directory.
func Load(path string, kinds Kinds) (*Config, error) {
	data, err := yamldecode.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, kinds)
}
