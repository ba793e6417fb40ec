package signalrhub

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// newHub builds the SignalR side alone on a host of its own, wired as
// hub.New wires it (the heartbeat running), logging warnings to the test.
// It closes when the test ends.
func newHub(t testing.TB, cfg Config, host core.Config) *Hub {
	t.Helper()
	host.Logger = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	return newHubWithLogger(t, cfg, host)
}

// newHubWithLogger is newHub with the hub's log going to host.Logger.
func newHubWithLogger(t testing.TB, cfg Config, host core.Config) *Hub {
	t.Helper()
	hc, err := core.NewHost(host, core.NewMetrics())
	if err != nil {
		t.Fatalf("NewHost: %v", err)
	}
	h := New(hc, cfg)
	hc.Start(h.Beat)
	t.Cleanup(h.Close)
	return h
}

// Close is what hub.Hub's Close does for this side: a Close to every
// client, then the host's goroutines stopped.
func (h *Hub) Close() { h.Host.Close(h.CloseAll) }

// startHub serves newHub on 127.0.0.1 for the length of the test. The
// metrics are the host's.
func startHub(t testing.TB, cfg Config, host core.Config) (*Hub, *wiretest.TestServer, *core.Metrics) {
	t.Helper()
	return serve(t, newHub(t, cfg, host))
}

// startHubWithLogger is startHub with the hub's log going to host.Logger.
func startHubWithLogger(t testing.TB, cfg Config, host core.Config) (*Hub, *wiretest.TestServer, *core.Metrics) {
	t.Helper()
	return serve(t, newHubWithLogger(t, cfg, host))
}

func serve(t testing.TB, h *Hub) (*Hub, *wiretest.TestServer, *core.Metrics) {
	t.Helper()
	return h, wiretest.Serve(t, h, h.cfg.Path, h.Config.AccessKey, h.Close), h.Metrics
}

// connByID finds a registered connection of any hub name.
func (h *Hub) connByID(id string) *conn {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	for _, s := range h.spaces.ByName {
		if c := s.Conns[id]; c != nil {
			return c
		}
	}
	return nil
}
