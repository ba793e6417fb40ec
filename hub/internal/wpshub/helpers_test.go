package wpshub

import (
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

// Roles that let a test client do everything.
var allRoles = []string{roleJoinLeaveGroup, roleSendToGroup}

// newHub builds the Web PubSub side alone on a host of its own with the
// access key wiretest.AccessKey, wired as hub.New wires it (the heartbeat
// running), logging warnings to the test. It closes when the test ends.
func newHub(t testing.TB, cfg Config, host core.Config) *Hub {
	t.Helper()
	host.AccessKey = wiretest.AccessKey
	host.Logger = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	hc, err := core.NewHost(host, core.NewMetrics())
	if err != nil {
		t.Fatalf("NewHost: %v", err)
	}
	h := New(hc, cfg, NewEventHandlerMetric())
	hc.Start(h.Beat)
	t.Cleanup(h.Close)
	return h
}

// Close is what hub.Hub's Close does for this side: every client told the
// hub is shutting down, then the host's goroutines stopped.
func (h *Hub) Close() { h.Host.Close(h.CloseAll) }

// handler routes as hub.Hub does, without the SignalR side.
func (h *Hub) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Serves(r) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// startHub serves newHub on 127.0.0.1 for the length of the test. The
// metrics are the host's.
func startHub(t testing.TB, cfg Config, host core.Config) (*Hub, *wiretest.TestServer, *core.Metrics) {
	t.Helper()
	h := newHub(t, cfg, host)
	return h, wiretest.Serve(t, h.handler(), "", h.Config.AccessKey, h.Close), h.Metrics
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
