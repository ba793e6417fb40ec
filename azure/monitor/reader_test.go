package monitor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/azure/monitortest"
)

// serveSignalRUsage makes the rig's SignalR resource report a minute of
// usage in every grain.
func serveSignalRUsage(g *rig) {
	for name, v := range map[string]float64{
		"ServerLoad": 75, "ConnectionCount": 850, "ConnectionQuotaUtilization": 85,
		"InboundTraffic": 1.2e6, "OutboundTraffic": 2.4e6, "MessageCount": 600,
		"ServerConnectionLatency": 25, "SystemErrors": 0.5, "UserErrors": 12,
	} {
		g.srv.Set(g.id, name, v)
	}
	g.srv.SetCloses(g.id, map[string]float64{"Throttled": 30, "Normal": 120, "PingTimeout": 6, "SomethingNew": 3})
}

// One read brings every metric: percentages become ratios, totals per
// minute rates per second, milliseconds seconds, and a close category
// Azure adds later "other".
func TestReaderExportsTheServiceUsage(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	r := g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)

	want := map[string]float64{
		"hubprobe_service_connections{azure}":                               850,
		"hubprobe_service_connection_quota_utilization_ratio{azure}":        0.85,
		"hubprobe_service_inbound_bytes_per_second{azure}":                  20000,
		"hubprobe_service_outbound_bytes_per_second{azure}":                 40000,
		"hubprobe_service_outbound_messages_per_second{azure}":              10,
		"hubprobe_service_server_connection_latency_seconds{azure}":         0.025,
		"hubprobe_service_errors_ratio{system,azure}":                       0.005,
		"hubprobe_service_errors_ratio{user,azure}":                         0.12,
		"hubprobe_service_connection_closes_per_second{throttled,azure}":    0.5,
		"hubprobe_service_connection_closes_per_second{normal,azure}":       2,
		"hubprobe_service_connection_closes_per_second{ping_timeout,azure}": 0.1,
		"hubprobe_service_connection_closes_per_second{other,azure}":        0.05,
		"hubprobe_service_metrics_reads_total{azure}":                       1,
	}
	got := g.values(t)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for _, reason := range monitor.Reasons {
		if v, ok := got["hubprobe_service_metrics_read_failures_total{"+reason+",azure}"]; !ok || v != 0 {
			t.Errorf("read failures %s = %v (exists %v), want 0", reason, v, ok)
		}
	}
	if load := r.ServerLoad(); load != 0.75 {
		t.Errorf("ServerLoad() = %v, want 0.75", load)
	}
	// The newest complete minute ends at the last whole minute.
	if age := got["hubprobe_service_metrics_age_seconds{azure}"]; age < 0 || age > 61 {
		t.Errorf("age %vs, want under a minute", age)
	}
}

// All metric names go in one request, with both aggregations, the close
// categories split out beside metrics that lack that dimension, and a
// token the SDK's bearer policy got from the credential for the
// endpoint's audience.
func TestReaderSendsOneQueryForEveryMetric(t *testing.T) {
	g := newRig(t, monitortest.SignalR)
	serveSignalRUsage(g)
	g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)
	reqs := g.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	q := reqs[0].Query
	names := strings.Split(q["metricnames"], ",")
	if len(names) != 10 || q["aggregation"] != "maximum,total" || q["interval"] != "PT1M" ||
		q["$filter"] != "ConnectionCloseCategory eq '*'" || q["ValidateDimensions"] != "false" || q["api-version"] != "2024-02-01" {
		t.Errorf("query %v", q)
	}
	from, to, _ := strings.Cut(q["timespan"], "/")
	start, _ := time.Parse(time.RFC3339, from)
	end, _ := time.Parse(time.RFC3339, to)
	if end.Sub(start) != 10*time.Minute || !end.Equal(end.Truncate(time.Minute)) || time.Since(end) > time.Minute {
		t.Errorf("timespan %s: want the last ten whole minutes", q["timespan"])
	}
	if resource, ok := g.srv.TokenResource(reqs[0].Bearer); !ok || resource != g.srv.URL {
		t.Errorf("bearer token issued for %q (by the rig: %v), want the endpoint's audience %s", resource, ok, g.srv.URL)
	}
}

// Web PubSub calls its connection count TotalConnectionCount and has no
// message count, server connection latency or error percentages: the
// query does not ask for them (the rig refuses a metric the resource
// lacks, as Azure does).
func TestReaderReadsWebPubSubMetrics(t *testing.T) {
	g := newRig(t, monitortest.WebPubSub)
	g.srv.Set(g.id, "TotalConnectionCount", 420)
	g.srv.Set(g.id, "ServerLoad", 45)
	g.srv.Set(g.id, "ConnectionQuotaUtilization", 42)
	g.srv.Set(g.id, "InboundTraffic", 600)
	g.srv.Set(g.id, "OutboundTraffic", 1200)
	r := g.start(t, nil)
	g.waitReads(t, 1, 10*time.Second)
	got := g.values(t)
	if got["hubprobe_service_connections{azure}"] != 420 || got["hubprobe_service_outbound_bytes_per_second{azure}"] != 20 ||
		got["hubprobe_service_connection_closes_per_second{throttled,azure}"] != 0 || r.ServerLoad() != 0.45 {
		t.Errorf("values %v, server load %v", got, r.ServerLoad())
	}
	for _, absent := range []string{"hubprobe_service_outbound_messages_per_second", "hubprobe_service_errors_ratio", "hubprobe_service_server_connection_latency_seconds"} {
		if s := g.series(t, absent); len(s) != 0 {
			t.Errorf("%v exported for Web PubSub", s)
		}
	}
	if n := g.value(t, "hubprobe_service_metrics_read_failures_total", "empty_series", target); n != 0 {
		t.Errorf("empty_series %v: every Web PubSub metric had data", n)
	}
}
