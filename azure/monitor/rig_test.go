package monitor_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/azure/monitortest"
)

// rig is a Monitor server with one resource, and the metrics a reader of
// it records into.
type rig struct {
	srv *monitortest.Server
	id  string
	reg *prometheus.Registry
	m   *monitor.Metrics
}

const target = "azure"

func newRig(t *testing.T, typ string) *rig {
	t.Helper()
	srv := monitortest.New(t)
	reg := prometheus.NewRegistry()
	m, err := monitor.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{srv: srv, id: srv.AddResource(typ, "probe-west"), reg: reg, m: m}
}

// start starts a reader of the rig's resource, signed in with azidentity's
// managed identity credential at the rig; change adjusts its options.
func (g *rig) start(t *testing.T, change func(*monitor.Options)) *monitor.Reader {
	t.Helper()
	id, err := monitor.ParseResourceID(g.id)
	if err != nil {
		t.Fatal(err)
	}
	opts := monitor.Options{
		Target: target, Resource: id, Endpoint: g.srv.URL, Interval: time.Minute,
		Credential: g.srv.ManagedIdentityCredential(t), Transport: g.srv.Client, Logger: zerolog.Nop(),
	}
	if change != nil {
		change(&opts)
	}
	r, err := monitor.Start(t.Context(), opts, g.m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// waitReads waits until the reader has finished n reads.
func (g *rig) waitReads(t *testing.T, n int, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() bool { return g.value(t, "hubprobe_service_metrics_reads_total", target) >= float64(n) },
		fmt.Sprintf("%d reads", n))
}

func waitFor(t *testing.T, within time.Duration, done func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// values gathers every series as name{label values in order} → value.
func (g *rig) values(t *testing.T) map[string]float64 {
	t.Helper()
	mfs, err := g.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

// value is one series' value, 0 when it does not exist.
func (g *rig) value(t *testing.T, name string, labels ...string) float64 {
	return g.values(t)[name+"{"+strings.Join(labels, ",")+"}"]
}

// series lists the series of name, sorted.
func (g *rig) series(t *testing.T, name string) []string {
	var out []string
	for k := range g.values(t) {
		if strings.HasPrefix(k, name+"{") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
