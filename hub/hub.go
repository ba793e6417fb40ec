package hub

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/probe"
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
	delay    atomic.Int64 // DeliveryDelay in nanoseconds
	ping     *frame

	mu     sync.RWMutex
	closed bool
	live   map[*conn]struct{}            // every open transport
	byID   map[string]*conn              // connections past the handshake
	groups map[string]map[*conn]struct{} // group name → members

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
	ping, _ := jsonCodec.AppendMessage(nil, &probe.Message{Type: probe.PingType})
	h := &Hub{
		opts:     opts,
		log:      opts.Logger,
		metrics:  m,
		upgrader: newUpgrader(),
		tokens:   newTokenStore(),
		load:     newLoadSampler(time.Now()),
		epoch:    time.Now(),
		ping:     staticFrame(ping),
		live:     make(map[*conn]struct{}),
		byID:     make(map[string]*conn),
		groups:   make(map[string]map[*conn]struct{}),
		stop:     make(chan struct{}),
	}
	h.delay.Store(int64(opts.DeliveryDelay))
	h.delayed = newDelayQueue(h.now, h.sendRecovering)
	h.bg.Add(2)
	go func() { defer h.bg.Done(); h.delayed.run(h.stop) }()
	go func() { defer h.bg.Done(); h.heartbeat() }()
	return h, nil
}

// now is the hub's monotonic clock in nanoseconds.
func (h *Hub) now() int64 { return int64(time.Since(h.epoch)) }

// ServeHTTP serves negotiate and the transport; any other path is 404.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case h.opts.Path, h.opts.Path + "/":
		h.serveTransport(w, r)
	case h.opts.Path + "/negotiate":
		h.serveNegotiate(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Hub) serveTransport(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if h.isClosed() {
		http.Error(w, "hub is shutting down", http.StatusServiceUnavailable)
		return
	}
	token := r.URL.Query().Get("id")
	id, status := h.tokens.claim(token, h.now())
	if status != http.StatusOK {
		http.Error(w, http.StatusText(status), status)
		return
	}
	defer h.tokens.release(token)
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "this hub serves only the WebSockets transport", http.StatusBadRequest)
		return
	}
	hj := &hijackRecorder{ResponseWriter: w}
	ws, err := h.upgrader.Upgrade(hj, r, nil)
	if err != nil {
		h.log.Debug().Err(err).Msg("websocket upgrade failed")
		return
	}
	c := newConn(h, wsTransport{ws: ws, br: hj.br}, id)
	if !h.track(c) {
		c.t.Abort()
		return
	}
	defer h.conns.Done()
	c.serve()
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
	h.byID[c.id] = c
	h.metrics.connections.Inc()
	return true
}

func (h *Hub) untrack(c *conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.live, c)
	if h.byID[c.id] == c {
		delete(h.byID, c.id)
		h.metrics.connections.Dec()
	}
	for g := range c.groups {
		h.removeFromGroupLocked(c, g)
	}
}

func (h *Hub) addToGroup(c *conn, group string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID[c.id] != c {
		return // already leaving
	}
	members := h.groups[group]
	if members == nil {
		members = make(map[*conn]struct{})
		h.groups[group] = members
	}
	members[c] = struct{}{}
	if c.groups == nil {
		c.groups = make(map[string]struct{})
	}
	c.groups[group] = struct{}{}
}

func (h *Hub) removeFromGroup(c *conn, group string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeFromGroupLocked(c, group)
}

func (h *Hub) removeFromGroupLocked(c *conn, group string) {
	delete(c.groups, group)
	members := h.groups[group]
	delete(members, c)
	if len(members) == 0 {
		delete(h.groups, group)
	}
}

// SetDeliveryDelay changes the slow-mode delay for messages sent from now on.
func (h *Hub) SetDeliveryDelay(d time.Duration) { h.delay.Store(int64(max(d, 0))) }

func (h *Hub) deliveryDelay() int64 { return h.delay.Load() }

// Close sends Close to every client, closes the sockets and stops the hub's
// goroutines. It returns once they are gone (at most about two seconds for
// clients that stopped reading). Later requests get 503.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		live := make([]*conn, 0, len(h.live))
		for c := range h.live {
			live = append(live, c)
		}
		h.mu.Unlock()
		for _, c := range live {
			c.requestClose(&probe.Message{Type: probe.CloseType})
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
