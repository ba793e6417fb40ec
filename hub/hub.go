package hub

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/azure/oidc"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Hub is the embedded reference hub. It is an http.Handler; Start serves it
// on its own listener.
type Hub struct {
	opts     Options
	log      zerolog.Logger
	metrics  *metrics
	upgrader *websocket.Upgrader
	tokens   *tokenStore
	delayed  *delayQueue
	load     *loadSampler
	epoch    time.Time
	delay    atomic.Int64      // DeliveryDelay in nanoseconds
	pings    [numCodecs]*frame // a Ping in each hub protocol
	key      []byte            // see azureKey; nil when Azure emulation is off
	entra    *oidc.Verifier    // nil without Options.EntraIssuer
	home     *space            // the hub name the app path serves
	wps      *wpsState         // the Web PubSub data plane

	mu     sync.RWMutex
	closed bool
	live   map[*conn]struct{} // every open transport
	spaces map[string]*space  // hub name → its connections

	conns     sync.WaitGroup // connection and stream goroutines
	stop      chan struct{}
	bg        sync.WaitGroup // heartbeat and delay queue
	closeOnce sync.Once
}

// New builds a hub and registers its metrics with reg; a nil reg keeps the
// metrics unexported. The hub runs two background goroutines until Close.
func New(opts Options, reg prometheus.Registerer) (*Hub, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("registering hub metrics: %w", err)
	}
	h := &Hub{
		opts:     opts,
		log:      opts.Logger,
		metrics:  m,
		upgrader: transport.NewUpgrader(),
		tokens:   newTokenStore(),
		load:     newLoadSampler(time.Now()),
		epoch:    time.Now(),
		live:     make(map[*conn]struct{}),
		spaces:   make(map[string]*space),
		stop:     make(chan struct{}),
	}
	for _, cd := range codecs {
		ping, _ := cd.AppendMessage(nil, &signalr.Message{Type: signalr.PingType})
		h.pings[cd.index] = staticFrame(ping)
	}
	h.key = azureKey(opts)
	if h.entra, err = newEntraVerifier(opts); err != nil {
		return nil, err
	}
	h.home, _ = h.spaceNamed(opts.hubName())
	h.wps = newWPSState(h)
	h.delay.Store(int64(opts.DeliveryDelay))
	h.delayed = newDelayQueue(h.now, h.sendRecovering)
	h.bg.Add(2)
	go func() { defer h.bg.Done(); h.delayed.run(h.stop) }()
	go func() { defer h.bg.Done(); h.heartbeat() }()
	return h, nil
}

// now is the hub's monotonic clock in nanoseconds.
func (h *Hub) now() int64 { return int64(time.Since(h.epoch)) }

// ServeHTTP serves negotiate and the transports at Options.Path and, with
// an AccessKey, Azure SignalR Service's and Azure Web PubSub's client
// endpoints and REST APIs; any other path is 404.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == h.opts.Path || p == h.opts.Path+"/":
		h.serveConnection(w, r, identity{space: h.home})
	case p == h.opts.Path+"/negotiate":
		h.serveAppNegotiate(w, r)
	case h.key != nil && (p == "/client" || p == "/client/"):
		h.serveClient(w, r, false)
	case h.key != nil && p == "/client/negotiate":
		h.serveClient(w, r, true)
	case h.key != nil && strings.HasPrefix(p, wpsHubPrefix):
		h.serveWebPubSubClient(w, r)
	case h.key != nil && strings.HasPrefix(p, "/api/") && h.forWebPubSub(r):
		h.serveWebPubSubREST(w, r)
	case h.key != nil && strings.HasPrefix(p, "/api/"):
		h.serveREST(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Hub) serveAppNegotiate(w http.ResponseWriter, r *http.Request) {
	if h.opts.RedirectNegotiate {
		h.serveRedirect(w, r)
		return
	}
	h.serveNegotiate(w, r, identity{space: h.home})
}

// track admits a new transport unless the hub is closing.
func (h *Hub) track(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.live[c] = struct{}{}
	h.conns.Add(1)
	return true
}

// register makes a connection addressable once its handshake is done.
func (h *Hub) register(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	c.space.enter(c, c.id, c.user)
	h.metrics.connections.Inc()
	return true
}

func (h *Hub) untrack(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.live, c)
	if c.space.exit(c, c.id, c.user, c.groups) {
		h.metrics.connections.Dec()
	}
}

func (h *Hub) addToGroup(c *conn, group string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.space.join(c, c.id, group, &c.groups)
}

func (h *Hub) removeFromGroup(c *conn, group string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.space.leave(c, group, c.groups)
}

// SetDeliveryDelay changes the slow-mode delay for messages sent from now on.
func (h *Hub) SetDeliveryDelay(d time.Duration) { h.delay.Store(int64(max(d, 0))) }

func (h *Hub) deliveryDelay() int64 { return h.delay.Load() }

// Close sends Close to every client, closes the transports and stops the
// hub's goroutines. It returns once they are gone (at most about two
// seconds for clients that stopped reading or polling). Later requests get
// 503.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		live := make([]*conn, 0, len(h.live))
		for c := range h.live {
			live = append(live, c)
		}
		wps := h.wpsLiveLocked()
		h.mu.Unlock()
		for _, c := range live {
			c.requestClose(&signalr.Message{Type: signalr.CloseType})
		}
		for _, c := range wps {
			c.requestClose(wpsCloseShutdown)
		}
		close(h.stop)
		h.bg.Wait()
		h.conns.Wait()
	})
}

func (h *Hub) isClosed() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.closed
}

// recovered accounts for a panic on a connection's goroutine and closes it.
func (h *Hub) recovered(c *conn, r any) {
	h.metrics.panics.Inc()
	h.log.Error().Str("connection", c.id).Interface("panic", r).
		Bytes("stack", debug.Stack()).Msg("recovered from panic")
	c.requestClose(closeWithError(errMsgGeneric))
}

// sendRecovering is send for the slow-mode goroutine, which must survive a
// panic in any one delivery.
func (h *Hub) sendRecovering(d *delivery) {
	defer func() {
		if r := recover(); r != nil {
			h.metrics.panics.Inc()
			h.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("recovered from panic")
		}
	}()
	h.send(d, false)
}

// newID returns 128 random bits, URL-safe, like ASP.NET's connection ids.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
