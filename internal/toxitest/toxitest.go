// Package toxitest puts toxiproxy, in process on 127.0.0.1, in front of a
// server for tests: network latency, bandwidth limits, cut and black-holed
// connections, between hubprobe's clients and a hub.
package toxitest

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
)

// Toxic is one toxiproxy toxic. Downstream is the server's bytes to the
// client, upstream the client's to the server.
type Toxic struct {
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"` // share of connections it acts on
	Attributes map[string]any `json:"attributes"`
}

// Name is what the toxic is called on its proxy: one toxic per type and
// stream.
func (x Toxic) Name() string { return x.Type + "_" + x.Stream }

// Latency delays every byte of stream by ms milliseconds, give or take
// jitter (the toxic draws a whole number from [ms-jitter, ms+jitter-1]).
func Latency(stream string, ms, jitter int) Toxic {
	return Toxic{"latency", stream, 1, map[string]any{"latency": ms, "jitter": jitter}}
}

var quiet sync.Once

// Start proxies serverURL's host from a fresh port on 127.0.0.1 and
// returns the proxy and serverURL through it. The proxy stops when the
// test ends.
func Start(t testing.TB, serverURL string) (*toxiproxy.Proxy, string) {
	t.Helper()
	// Some toxics log through zerolog's global logger, which nothing in
	// hubprobe uses.
	quiet.Do(func() { log.Logger = zerolog.Nop() })
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(api, "hub", "127.0.0.1:0", u.Host)
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)
	u.Host = proxy.Listen
	return proxy, u.String()
}

// Remove takes toxics off proxy, failing the test (not stopping it) for
// each that toxiproxy does not have.
func Remove(t testing.TB, proxy *toxiproxy.Proxy, toxics ...Toxic) {
	t.Helper()
	for _, x := range toxics {
		if err := proxy.Toxics.RemoveToxic(context.Background(), x.Name()); err != nil {
			t.Errorf("removing toxic %s: %v", x.Name(), err)
		}
	}
}

// Add puts toxics on proxy, failing the test (not stopping it) for each
// that toxiproxy refuses.
func Add(t testing.TB, proxy *toxiproxy.Proxy, toxics ...Toxic) {
	t.Helper()
	for _, x := range toxics {
		body, err := json.Marshal(struct {
			Name string `json:"name"`
			Toxic
		}{x.Name(), x})
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(string(body))); err != nil {
			t.Errorf("adding toxic %s: %v", body, err)
		}
	}
}
