package bench

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// Plan is a benchmark file mapped onto hubprobe: what `hubprobe bench`
// runs and what --import prints.
type Plan struct {
	File string
	// Name is the benchmark's scenario name, Kind hubprobe's for it.
	Name, Kind string
	// Exactly one of URL and ConnectionString is set: the app server's
	// hub URL, or the service for the serverless rest* scenarios.
	URL              string
	ConnectionString config.Secret

	Transport, Protocol             string
	Connections, ConnectConcurrency int
	// Search is the file's ramp: baseSending, step, sendingSteps and
	// singleStepDuration.
	Search       config.CapacitySearch
	MessageSize  int
	SendInterval time.Duration
	// GroupSize is 0 for scenarios without groups.
	GroupSize       int
	StreamItemDelay time.Duration
	// StreamItems is streamingItemCount: the items of one stream call,
	// which hubprobe spreads over the sending interval.
	StreamItems int
	// ConnectionFailShare and SlowShare are the thresholds of the
	// benchmark's conditional stop.
	ConnectionFailShare, SlowShare float64
	// Warnings name the keys the benchmark knows and hubprobe does not use,
	// each with its file and line, as the configuration's errors do.
	Warnings []*config.Error
}

// checker turns a decoded file into a plan, failing on what the benchmark
// would refuse or hubprobe cannot honour.
type checker struct {
	*yamldecode.Decoder
	file     *File
	plan     Plan
	warnings []*yamldecode.Error
}

func (c *checker) warn(key, format string, args ...any) {
	c.warnings = append(c.warnings, c.Errorf(key, format, args...))
}

// build runs every check in the order the file reads.
func (c *checker) build(filename string) (*Plan, error) {
	c.plan.File = filename
	for _, check := range []func() error{
		c.mode, c.kind, c.scenarioName, c.target, c.transport, c.protocol,
		c.connectionType, c.arriving, c.ramp, c.parameters, c.thresholds,
	} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	c.unused()
	slices.SortStableFunc(c.warnings, func(a, b *yamldecode.Error) int { return a.Line - b.Line })
	c.plan.Warnings = c.warnings
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c.plan, nil
}

// mode: the benchmark reads a file as simple mode only when mode is
// exactly "simple"; anything else is its advanced pipeline format.
func (c *checker) mode() error {
	switch {
	case !c.Has("mode"):
		return c.Errorf("mode", "mode: simple is required; hubprobe bench runs the benchmark's simple mode only")
	case c.file.Mode != "simple":
		return c.Errorf("mode", "only mode: simple is supported (the advanced pipeline format is not), got %q", c.file.Mode)
	}
	return nil
}

func (c *checker) kind() error {
	switch c.file.Kind {
	case "perf", "perf2":
		if c.Has("kind") {
			c.warn("kind", "not used: hubprobe does not reconnect dropped connections (neither perf's background repair nor perf2's reconnect before each step); a dropped connection stays down and counts against its step")
		}
		return nil
	case "resultparser":
		return c.Errorf("kind", "resultparser reads the counters file of an earlier run; hubprobe bench runs the benchmark and does not parse its output")
	}
	return c.Errorf("kind", "must be perf, perf2 or resultparser, got %q", c.file.Kind)
}

func (c *checker) scenarioName() error {
	name := c.file.Scenario.Name
	kind, ok := scenarioKinds[name]
	if !ok {
		return c.Errorf("scenario.name", "unknown scenario %q (valid: %s)", name,
			strings.Join(slices.Sorted(maps.Keys(scenarioKinds)), ", "))
	}
	c.plan.Name, c.plan.Kind = name, kind
	if strings.HasPrefix(name, "restPersist") {
		c.warn("scenario.name", "%s runs as %s: hubprobe sends through the REST API, not over a persistent server connection; the deliveries are the same",
			name, strings.Replace(name, "restPersist", "rest", 1))
	}
	return nil
}

// serverless reports whether the benchmark runs the scenario serverless:
// it decides by the name alone.
func (c *checker) serverless() bool { return strings.HasPrefix(c.plan.Name, "rest") }

// target picks the hub the way the benchmark does: rest* scenarios reach
// the service from the connection string, the others the app server at
// webAppTarget.
func (c *checker) target() error {
	cfg := c.file.Config
	switch {
	case cfg.WebAppTarget == "" && cfg.ConnectionString == "":
		return c.Errorf("config", "connectionString and webAppTarget cannot both be empty; give one of them")
	case c.serverless() && cfg.ConnectionString == "":
		return c.Errorf("config", "%s sends through the service's REST API and needs connectionString", c.plan.Name)
	case c.serverless():
		if cfg.WebAppTarget != "" {
			c.warn("config.webAppTarget", "not used: %s reaches the service from connectionString, as in the benchmark", c.plan.Name)
		}
		c.plan.ConnectionString = cfg.ConnectionString
		return nil
	case cfg.WebAppTarget == "":
		return c.Errorf("config.connectionString", "%s with only a connectionString needs the benchmark's internal app server, "+
			"the bench hub hosted behind the service in server mode, which hubprobe cannot be; "+
			"set webAppTarget to the hub URL of an app server hosting the bench hub (connected to the service in default mode, it sends its clients on to the service)",
			c.plan.Name)
	case strings.Contains(cfg.WebAppTarget, ","):
		return c.Errorf("config.webAppTarget", "several app server URLs are not supported: hubprobe reaches one URL per run")
	}
	if cfg.ConnectionString != "" {
		c.warn("config.connectionString", "not used: webAppTarget is given, and %s reaches the app server there, as in the benchmark", c.plan.Name)
	}
	c.plan.URL = cfg.WebAppTarget
	return nil
}

// transports maps the benchmark's transport names, which it matches in
// any case, onto hubprobe's.
var transports = map[string]string{"websockets": "websockets", "serversentevents": "sse", "longpolling": "longpolling"}

func (c *checker) transport() error {
	t, ok := transports[strings.ToLower(c.file.Config.Transport)]
	if !ok {
		return c.Errorf("config.transport", "unknown transport %q (valid: WebSockets, ServerSentEvents, LongPolling)", c.file.Config.Transport)
	}
	c.plan.Transport = t
	return nil
}

// protocol: the benchmark speaks MessagePack for "messagepack" in any case
// and JSON for any other value.
func (c *checker) protocol() error {
	c.plan.Protocol = "json"
	switch p := strings.ToLower(c.file.Config.Protocol); {
	case p == "messagepack" && c.plan.Transport == "sse":
		return c.Errorf("config.protocol", "messagepack needs a binary transport; ServerSentEvents carries text only")
	case p == "messagepack":
		c.plan.Protocol = p
	case p != "json":
		c.warn("config.protocol", "%q is neither json nor messagepack; the benchmark speaks JSON then, and so does hubprobe", c.file.Config.Protocol)
	}
	return nil
}

func (c *checker) connectionType() error {
	switch c.file.Config.ConnectionType {
	case "Core":
		return nil
	case "AspNet":
		return c.Errorf("config.connectionType", "AspNet (classic ASP.NET SignalR) is not supported: hubprobe speaks ASP.NET Core SignalR")
	}
	return c.Errorf("config.connectionType", "must be Core or AspNet, got %q", c.file.Config.ConnectionType)
}

// batchModes are the connection pacings the benchmark knows.
var batchModes = []string{"HighPress", "LowPress", "LimitRatePress", "ExtLimitRatePress"}

// arriving: hubprobe opens at most arrivingRate connections at a time,
// which is what the default HighPress pacing amounts to.
func (c *checker) arriving() error {
	cfg := c.file.Config
	if cfg.ArrivingRate == 0 {
		return c.Errorf("config.arrivingRate", "must be at least 1: it is how many connections open at a time")
	}
	if !slices.Contains(batchModes, cfg.ArrivingBatchMode) {
		return c.Errorf("config.arrivingBatchMode", "unknown mode %q (valid: %s)", cfg.ArrivingBatchMode, strings.Join(batchModes, ", "))
	}
	c.plan.ConnectConcurrency = int(min(cfg.ArrivingRate, config.MaxConnections))
	for _, key := range []string{"config.arrivingBatchMode", "config.arrivingBatchWait"} {
		if c.Has(key) {
			c.warn(key, "not used: hubprobe opens at most arrivingRate connections at a time, as the default HighPress does")
		}
	}
	return nil
}
