package hub

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub/internal/aspnethub"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/signalrhub"
	"github.com/hubprobe/hubprobe/hub/internal/wpshub"
)

// Hub is the embedded reference hub. It is an http.Handler; Start serves it
// on its own listener.
type Hub struct {
	opts      Options
	host      *core.Host
	signalR   *signalrhub.Hub
	webPubSub *wpshub.Hub
	classic   *aspnethub.Hub
	load      *loadSampler
	// nextDrill is when the standing drill (Options.DropEvery) next ends
	// a connection, on the hub's clock; only the heartbeat uses it.
	nextDrill int64
	// restartedUntil is until when a restart drill refuses requests, on
	// the hub's clock.
	restartedUntil atomic.Int64
}

// New builds a hub and registers its metrics with reg; a nil reg keeps the
// metrics unexported. The hub runs background goroutines (the heartbeat
// and a slow-mode queue per protocol) until Close.
func New(opts Options, reg prometheus.Registerer) (*Hub, error) {
	opts, err := opts.checked()
	if err != nil {
		return nil, err
	}
	m, eventHandler, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("registering hub metrics: %w", err)
	}
	host, err := core.NewHost(opts.hostConfig(), m)
	if err != nil {
		return nil, err
	}
	h := &Hub{
		opts:      opts,
		host:      host,
		signalR:   signalrhub.New(host, opts.signalRConfig()),
		webPubSub: wpshub.New(host, wpshub.Config{EventHandler: opts.WebPubSubEventHandler}, eventHandler),
		classic:   aspnethub.New(host, opts.classicConfig()),
		load:      newLoadSampler(time.Now()),
	}
	host.Start(h.beat)
	return h, nil
}

// beat is the heartbeat: each protocol's keep-alives and timeouts, then a
// CPU sample for Load.
func (h *Hub) beat(now int64) {
	h.drill(now)
	h.signalR.Beat(now)
	h.webPubSub.Beat(now)
	h.classic.Beat(now)
	h.load.record(time.Now())
}

// ServeHTTP serves negotiate and the transports at Options.Path and, with
// the Azure emulation, Azure SignalR Service's and Azure Web PubSub's
// client endpoints and REST APIs; any other path is 404.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.host.Now() < h.restartedUntil.Load() {
		w.Header().Set("Retry-After", strconv.Itoa(int(core.RestartTime/time.Second)))
		http.Error(w, "The hub is restarting.", http.StatusServiceUnavailable)
		return
	}
	if h.webPubSub.Serves(r) {
		h.webPubSub.ServeHTTP(w, r)
		return
	}
	if h.classic.Serves(r) {
		h.classic.ServeHTTP(w, r)
		return
	}
	h.signalR.ServeHTTP(w, r)
}

// SetDeliveryDelay changes the slow-mode delay for messages sent from now on.
func (h *Hub) SetDeliveryDelay(d time.Duration) { h.host.SetDeliveryDelay(d) }

// drill runs the standing drill: one connection ended every
// Options.DropEvery, from the first period on.
func (h *Hub) drill(now int64) {
	every := int64(h.opts.DropEvery)
	switch {
	case every <= 0:
		return
	case h.nextDrill == 0:
		h.nextDrill = now + every
	case now >= h.nextDrill:
		h.nextDrill = now + every
		h.Drop(h.opts.DropHow, 1)
	}
}

// Drill is how Drop ends a connection on purpose: DrillCloseError,
// DrillCloseReconnect, DrillDisconnect or DrillAbort (see each protocol's
// words for them at core.Drill).
type Drill = core.Drill

// The drills Drop knows.
const (
	DrillCloseError     = core.DrillCloseError
	DrillCloseReconnect = core.DrillCloseReconnect
	DrillDisconnect     = core.DrillDisconnect
	DrillAbort          = core.DrillAbort
	DrillRestart        = core.DrillRestart
)

// Drills lists every drill, for flags and configuration to check against.
var Drills = core.Drills

// Drop ends up to n open connections of every protocol (all of them when
// n <= 0) as how says, and returns how many it ended. A restart ends every
// one, whatever n.
func (h *Hub) Drop(how Drill, n int) int {
	if how == DrillRestart {
		h.restartedUntil.Store(h.host.Now() + int64(core.RestartTime))
		n = 0
	}
	ended := h.signalR.Drop(how, n)
	if n <= 0 || ended < n {
		ended += h.webPubSub.Drop(how, n-ended)
	}
	if n <= 0 || ended < n {
		ended += h.classic.Drop(how, n-ended)
	}
	return ended
}

// Close sends Close to every client, closes the transports and stops the
// hub's goroutines. It returns once they are gone (at most about two
// seconds for clients that stopped reading or polling). Later requests get
// 503.
func (h *Hub) Close() {
	h.host.Close(func() {
		h.signalR.CloseAll()
		h.webPubSub.CloseAll()
		h.classic.CloseAll()
	})
}
