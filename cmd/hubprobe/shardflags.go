package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/capacity/stepquery"
)

// Environment variables the shard flags read: the chart's StatefulSet sets
// the first two; an Indexed Job sets the third on every pod.
const (
	envShardIndex = "HUBPROBE_SHARD_INDEX"
	envShardCount = "HUBPROBE_SHARD_COUNT"
	envJobIndex   = "JOB_COMPLETION_INDEX"
)

// shardFlags are --shard.index and --shard.count, which serve and run
// share. They are read as text so that a bad value, from a flag or the
// environment, is reported in hubprobe's own words.
type shardFlags struct {
	index, count string
}

func addShardFlags(cmd *kingpin.CmdClause, f *shardFlags) {
	cmd.Flag("shard.index", "This process's shard of every scenario, from 0 to --shard.count − 1 (also "+envJobIndex+", as an Indexed Job sets it).").
		Envar(envShardIndex).StringVar(&f.index)
	cmd.Flag("shard.count", "How many processes share every scenario: each runs its share of the connections and senders, at the same instants.").
		Envar(envShardCount).Default("1").StringVar(&f.count)
}

// shard parses and checks the flags.
func (f shardFlags) shard() (scenarios.Shard, error) {
	index, from := f.index, "--shard.index (or "+envShardIndex+")"
	if index == "" {
		index, from = os.Getenv(envJobIndex), envJobIndex
	}
	if index == "" {
		index = "0"
	}
	i, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil {
		return scenarios.Shard{}, fmt.Errorf("%s %q is not a whole number", from, index)
	}
	c, err := strconv.Atoi(strings.TrimSpace(f.count))
	if err != nil {
		return scenarios.Shard{}, fmt.Errorf("--shard.count (or %s) %q is not a whole number", envShardCount, f.count)
	}
	s := scenarios.Shard{Index: i, Count: c}
	if err := s.Validate(); err != nil {
		return scenarios.Shard{}, fmt.Errorf("--shard.index/--shard.count: %w", err)
	}
	return s, nil
}

// serveSettings are the settings of `hubprobe serve` beyond the web server's.
type serveSettings struct {
	shard          shardFlags
	prometheusURL  string
	prometheusWait time.Duration
}

func (c *cli) addServeFlags(cmd *kingpin.CmdClause) {
	f := &c.serveFlags
	addShardFlags(cmd, &f.shard)
	cmd.Flag("capacity.prometheus-url", "Prometheus that scrapes every shard: a sharded capacity search judges each step by all shards' figures, "+
		"read from its query API (without it, each shard judges its own).").StringVar(&f.prometheusURL)
	cmd.Flag("capacity.prometheus-wait", "How long each step of a sharded capacity search waits for Prometheus to hold every shard's figures: "+
		"at least the scrape interval.").Default(capacity.DefaultAggregateWait.String()).DurationVar(&f.prometheusWait)
}

// resolve parses the shard and what sharded capacity searches are judged
// by; an error is a usage error.
func (f serveSettings) resolve() (scenarios.Shard, capacity.SearchOptions, error) {
	search := capacity.SearchOptions{Wait: f.prometheusWait}
	shard, err := f.shard.shard()
	switch {
	case err != nil:
		return shard, search, err
	case f.prometheusWait <= 0:
		return shard, search, fmt.Errorf("--capacity.prometheus-wait %s must be positive", f.prometheusWait)
	case f.prometheusURL == "":
		return shard, search, nil
	}
	agg, err := stepquery.New(f.prometheusURL)
	if err != nil {
		return shard, search, fmt.Errorf("--capacity.prometheus-url is %w", err)
	}
	search.Aggregator = agg
	return shard, search, nil
}
