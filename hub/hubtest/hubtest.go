// Package hubtest serves hubprobe's reference hub on 127.0.0.1 for tests,
// as net/http/httptest serves a handler: for the packages that drive the
// hub, and for the hub's own tests of what it does as a whole.
package hubtest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/internal/toxitest"
)

// Start serves a hub with opts until the test ends.
func Start(t testing.TB, opts hub.Options) *hub.Server {
	t.Helper()
	_, srv := StartHub(t, opts, prometheus.NewRegistry())
	return srv
}

// StartHub is Start for a test that also drives the hub itself, its
// metrics registered with reg. The hub closes after the test's later
// cleanups, so those may still use it.
func StartHub(t testing.TB, opts hub.Options, reg prometheus.Registerer) (*hub.Hub, *hub.Server) {
	t.Helper()
	h, err := hub.New(opts, reg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := hub.Start(context.Background(), "127.0.0.1:0", h)
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return h, srv
}

// StartDistant serves a hub with opts over TLS on 127.0.0.1 behind
// toxiproxy, which holds every byte the hub sends back by delay, until
// the test ends: a hub far away. It returns the hub's base URL through
// the proxy and an HTTP client that trusts its certificate.
func StartDistant(t testing.TB, opts hub.Options, delay time.Duration) (string, *http.Client) {
	t.Helper()
	h, err := hub.New(opts, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := localtest.TLSServer(t, h)
	t.Cleanup(h.Close) // before the server closes
	proxy, url := toxitest.Start(t, srv.URL)
	toxitest.Add(t, proxy, toxitest.Latency("downstream", int(delay/time.Millisecond), 0))
	return url, srv.Client()
}

// WebPubSubClient is where a Web PubSub client of hub connects to the hub
// at origin (its scheme and address, as Start's Server.Origin or
// StartDistant's URL) whose access key is key, and a client token for
// user, as the service SDK mints it.
func WebPubSubClient(t testing.TB, origin, key, hub, user string) (url, token string) {
	t.Helper()
	cs, err := azure.ParseConnectionString("Endpoint=" + origin + ";AccessKey=" + key + ";Version=1.0;")
	if err != nil {
		t.Fatal(err)
	}
	if url, err = cs.WebPubSubClientURL(hub); err != nil {
		t.Fatal(err)
	}
	if token, err = azure.WebPubSubClientToken(cs, hub, user, nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	return url, token
}
