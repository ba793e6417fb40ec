package hub_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// startHub serves a fresh hub on 127.0.0.1 for the length of the test,
// logging warnings to the test; its metrics are registered with the
// registry returned.
func startHub(t *testing.T, opts hub.Options) (*hub.Hub, *hub.Server, *prometheus.Registry) {
	t.Helper()
	opts.Logger = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	reg := prometheus.NewRegistry()
	h, srv := hubtest.StartHub(t, opts, reg)
	return h, srv, reg
}

// startAzureHub serves a hub with the access key wiretest.AccessKey, so
// with both Azure emulations.
func startAzureHub(t *testing.T, opts hub.Options) (*hub.Hub, *hub.Server, azure.ConnectionString) {
	t.Helper()
	opts.AccessKey = wiretest.AccessKey
	h, srv, _ := startHub(t, opts)
	return h, srv, wiretest.MustConnectionString(t, srv.ConnectionString())
}

// startWPSHub is startAzureHub for tests of Web PubSub's data plane.
func startWPSHub(t *testing.T, opts hub.Options) (*hub.Hub, *hub.Server, *prometheus.Registry) {
	t.Helper()
	opts.AccessKey = wiretest.AccessKey
	return startHub(t, opts)
}

// startEntraHub serves a hub that takes Entra tokens from a fresh loopback
// tenant, beside tokens signed with wiretest.AccessKey unless opts
// disables local auth.
func startEntraHub(t *testing.T, opts hub.Options) (*hub.Hub, *hub.Server, *entratest.Server) {
	t.Helper()
	rig := entratest.New(t, entratest.Options{})
	opts.EntraIssuer, opts.EntraHTTPClient = rig.Issuer(), rig.HTTPClient()
	opts.AccessKey = wiretest.AccessKey
	h, srv, _ := startHub(t, opts)
	return h, srv, rig
}

// metricValue is the value of the counter or gauge name that reg gathers,
// of the series with the label values given (label=value pairs).
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == name && hasLabels(m, labels) {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()+"="+l.GetValue()] = ""
	}
	for _, p := range pairs {
		if _, ok := have[p]; !ok {
			return false
		}
	}
	return true
}
