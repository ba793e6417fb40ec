// Package hubtest serves hubprobe's reference hub on 127.0.0.1 for tests,
// as net/http/httptest serves a handler: for the packages that drive the
// hub, and for the hub's own tests of what it does as a whole.
package hubtest

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub"
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
