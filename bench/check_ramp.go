package bench

import (
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/config"
)

// ramp maps the sending steps: baseSending senders first, step more in
// each next step, (connections-baseSending)/step+1 steps at most, capped
// by sendingSteps unless it is 0.
func (c *checker) ramp() error {
	cfg := c.file.Config
	conns, base := int(cfg.Connections), int(cfg.BaseSending)
	switch {
	case conns == 0:
		return c.Errorf("config.connections", "must be at least 1")
	case base == 0:
		return c.Errorf("config.baseSending", "0 runs no sending step (the benchmark connects and prints nothing): there is nothing to measure")
	case cfg.Step == 0:
		return c.Errorf("config.step", "must be at least 1 (the benchmark divides by it)")
	case cfg.SingleStepDuration == 0:
		return c.Errorf("config.singleStepDuration", "must be at least 1 (milliseconds)")
	}
	if base > conns {
		c.warn("config.baseSending", "%d is more than the %d connections; the benchmark sends from all %d then, and so does hubprobe", base, conns, conns)
		base = conns
	}
	c.plan.Connections = conns
	// A step beyond the connections gives the same single step as one of
	// exactly the connections, which hubprobe's configuration accepts.
	c.plan.Search = config.CapacitySearch{
		BaseSending:  base,
		Step:         min(int(cfg.Step), conns),
		StepDuration: millis(cfg.SingleStepDuration),
		MaxSteps:     int(min(cfg.SendingSteps, config.MaxConnections)),
	}
	return nil
}

func millis(ms count) time.Duration { return time.Duration(ms) * time.Millisecond }

// parameters maps the scenario's parameters, warning about those its
// scenario does not read (the benchmark ignores them too).
func (c *checker) parameters() error {
	p := c.file.Scenario.Parameters
	if p.SendingInterval == 0 {
		return c.Errorf("scenario.parameters.sendingInterval", "must be at least 1 (milliseconds): hubprobe paces the sends from it")
	}
	c.plan.MessageSize, c.plan.SendInterval = int(p.MessageSize), millis(p.SendingInterval)
	if err := c.groups(); err != nil {
		return err
	}
	if c.plan.Kind != "streaming_echo" {
		c.unusedBy("scenario.parameters.streamingItemCount", "scenario.parameters.streamingItemSendDelay")
		return nil
	}
	if p.StreamingItemCount == 0 {
		return c.Errorf("scenario.parameters.streamingItemCount", "must be at least 1")
	}
	// The benchmark sends streamingItemCount items per stream call, one
	// call per sending interval; hubprobe streams one item at a time over
	// one stream per sender, so it sends at the same item rate.
	c.plan.StreamItems = int(p.StreamingItemCount)
	c.plan.SendInterval /= time.Duration(p.StreamingItemCount)
	c.plan.StreamItemDelay = millis(p.StreamingItemSendDelay)
	return nil
}

// groups: the benchmark puts connection i into group i % groupCount;
// hubprobe makes groups of consecutive connections, which gives the same
// number of groups of the same size when groupCount divides the
// connections, and single-member groups when there are more groups than
// connections.
func (c *checker) groups() error {
	const key = "scenario.parameters.groupCount"
	if !strings.HasSuffix(c.plan.Name, "Group") {
		c.unusedBy(key)
		return nil
	}
	groups, conns := int(c.file.Scenario.Parameters.GroupCount), c.plan.Connections
	if groups == 0 {
		return c.Errorf(key, "must be at least 1 for %s (the benchmark refuses 0 too)", c.plan.Name)
	}
	c.plan.GroupSize = max(1, (conns+groups-1)/groups)
	if groups < conns && conns%groups != 0 {
		c.warn(key, "%d groups do not divide %d connections: hubprobe makes groups of %d, so sends reach slightly more clients than in the benchmark",
			groups, conns, c.plan.GroupSize)
	}
	return nil
}

// unusedBy warns about parameters the file sets that its scenario does
// not read.
func (c *checker) unusedBy(keys ...string) {
	for _, key := range keys {
		if c.Has(key) {
			c.warn(key, "not used by %s (the benchmark ignores it too)", c.plan.Name)
		}
	}
}

func (c *checker) thresholds() error {
	cfg := c.file.Config
	for key, v := range map[string]float64{"config.connectionFailPercentage": cfg.ConnectionFailPercentage, "config.latencyPercentage": cfg.LatencyPercentage} {
		if v < 0 {
			return c.Errorf(key, "must not be negative, got %g", v)
		}
	}
	c.plan.ConnectionFailShare, c.plan.SlowShare = cfg.ConnectionFailPercentage, cfg.LatencyPercentage
	return nil
}

// unused warns about the benchmark's keys that change nothing in hubprobe.
func (c *checker) unused() {
	for key, why := range map[string]string{
		"config.resultFilePath": "hubprobe writes no counters file; the report and --output json hold every step",
		"config.debug":          "hubprobe prints no per-second counters; the report holds every step",
	} {
		if c.Has(key) {
			c.warn(key, "not used: %s", why)
		}
	}
}
