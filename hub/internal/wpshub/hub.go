package wpshub

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// The emulation of Azure Web PubSub's data plane, beside the SignalR one:
// clients connect at /client/hubs/{hub}?access_token=... with the
// json.webpubsub.azure.v1 or json.reliable.webpubsub.azure.v1 subprotocol
// (or none, as a simple WebSocket client), the REST API is under
// /api/hubs/{hub} with a Web PubSub api-version (rest.go), and user events
// go to the event handler (upstream.go). Hub names, groups and users are
// the Web PubSub service's own: they never mix with the SignalR
// emulation's.

// clientPath is the path of the client endpoint, before the hub name.
const clientPath = "/client/hubs/"

// recoverIDParam is the query parameter a reliable client adds when it
// tries to recover a dropped connection.
const recoverIDParam = "awps_connection_id"

// Config is the Web PubSub side's own settings.
type Config struct {
	// EventHandler is the event handler URL template ({hub} and {event}
	// filled in); empty sends no events.
	EventHandler string
}

// space is one Web PubSub hub name's connections.
type space = core.Space[*conn]

// Hub is the Web PubSub side of the reference hub, on a host it shares
// with the other protocols.
type Hub struct {
	*core.Host
	upgrader *websocket.Upgrader
	spaces   *core.Spaces[*conn]
	lifetime *core.Lifetime[*conn]
	delayed  *core.DelayQueue[delayedSend]
	events   *upstream // nil without an event handler
}

// New builds the Web PubSub side on host, counting its event handler
// requests into requests (NewEventHandlerMetric). Its slow-mode queue runs
// on a goroutine of the host's.
func New(host *core.Host, cfg Config, requests *prometheus.CounterVec) *Hub {
	up := transport.NewUpgrader()
	up.Subprotocols = []string{webpubsub.ProtocolJSONReliable, webpubsub.ProtocolJSON}
	h := &Hub{
		Host:     host,
		upgrader: up,
		spaces:   core.NewSpaces[*conn](host),
		lifetime: core.NewLifetime[*conn](host),
	}
	h.delayed = core.NewDelayQueue(host, func(d *delayedSend) { _ = h.send(d.space, d.addr, d.m) })
	if cfg.EventHandler != "" {
		h.events = newUpstream(h, cfg.EventHandler, requests)
	}
	return h
}

// Serves reports whether r is for the Web PubSub side: its client
// endpoint, or its REST API, which shares the /api/hubs/ paths with
// Azure SignalR Service's. An Entra token names the service in its
// audience; otherwise the api-version tells them apart (SignalR's is
// 2022-06-01).
func (h *Hub) Serves(r *http.Request) bool {
	p := r.URL.Path
	switch {
	case !h.EmulatesAzure():
		return false
	case strings.HasPrefix(p, clientPath):
		return true
	case !strings.HasPrefix(p, "/api/"):
		return false
	}
	if aud, ok := h.EntraAudience(core.BearerToken(r)); ok {
		switch {
		case slices.ContainsFunc(aud, core.IsResource(core.WebPubSubResource)):
			return isRESTPath(p)
		case slices.ContainsFunc(aud, core.IsResource(core.SignalRResource)):
			return false
		}
	}
	return isRESTPath(p) && slices.Contains(apiVersions, r.URL.Query().Get("api-version"))
}

// ServeHTTP serves the client endpoint and the REST API; any other path is
// 404.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, clientPath):
		h.serveClient(w, r)
	case strings.HasPrefix(p, "/api/"):
		h.serveREST(w, r)
	default:
		http.NotFound(w, r)
	}
}

// hubFromPath returns the hub name of a client endpoint path, lower-cased,
// and the escaped path a client token's audience names.
func hubFromPath(r *http.Request) (name, audiencePath string, ok bool) {
	escaped := strings.TrimSuffix(r.URL.EscapedPath(), "/")
	raw, found := strings.CutPrefix(escaped, clientPath)
	if !found || strings.Contains(raw, "/") {
		return "", "", false
	}
	name, err := url.PathUnescape(raw)
	if err != nil || !webpubsub.ValidHub(name) {
		return "", "", false
	}
	return strings.ToLower(name), escaped, true
}

// serveClient opens a client connection: token checked against the client
// URL, then the connection quota the SignalR side shares.
func (h *Hub) serveClient(w http.ResponseWriter, r *http.Request) {
	name, audiencePath, ok := hubFromPath(r)
	switch {
	case !ok:
		transport.WriteText(w, http.StatusNotFound, "Not found.")
		return
	case r.Method != http.MethodGet:
		w.Header().Set("Allow", http.MethodGet)
		transport.WriteText(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	case !websocket.IsWebSocketUpgrade(r):
		transport.WriteText(w, http.StatusBadRequest, "The client endpoint takes WebSocket connections only.")
		return
	case r.URL.Query().Has(recoverIDParam):
		h.refuseRecovery(w, r)
		return
	}
	if _, err := h.Authorize(r, audiencePath); err != nil {
		transport.WriteText(w, http.StatusUnauthorized, h.Unauthorized(err))
		return
	}
	claims, err := parseClaims(core.BearerToken(r))
	if err != nil {
		transport.WriteText(w, http.StatusUnauthorized, "Unauthorized.")
		return
	}
	h.admit(w, r, name, claims)
}

// admit checks that the hub takes one more connection and runs it.
func (h *Hub) admit(w http.ResponseWriter, r *http.Request, name string, claims clientClaims) {
	if h.IsClosed() {
		transport.WriteText(w, http.StatusServiceUnavailable, core.ShuttingDownText)
		return
	}
	s, ok := h.spaces.Named(name)
	if !ok {
		transport.WriteText(w, http.StatusServiceUnavailable, core.TooManySpacesText)
		return
	}
	if !h.ReserveConnection() {
		h.RefuseOverQuota(w)
		return
	}
	ws, err := h.upgrader.Upgrade(&transport.HijackRecorder{ResponseWriter: w}, r, nil)
	if err != nil {
		h.ReleaseConnection()
		h.Log.Debug().Err(err).Msg("websocket upgrade failed")
		return
	}
	c := newConn(h, ws, ws.Subprotocol(), s, claims, r.Host)
	if !h.lifetime.Track(c) {
		h.ReleaseConnection()
		_ = ws.Close()
		return
	}
	// The connection outlives the handler, so that the HTTP server's
	// request state goes when it returns (transport.HijackRecorder).
	transport.Serve(func() {
		defer h.ReleaseConnection()
		defer h.Conns.Done()
		c.serve(claims.Groups)
	})
}

// refuseRecovery answers a reliable client's attempt to recover a dropped
// connection. This hub keeps no state for dropped connections, so it says
// what the service says when the state is gone: close code 1008, after
// which the official client stops recovering and opens a new connection.
func (h *Hub) refuseRecovery(w http.ResponseWriter, r *http.Request) {
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "The connection cannot be recovered.")
	_ = ws.WriteControl(websocket.CloseMessage, msg, deadlineIn(core.CloseGrace))
	_ = ws.Close()
}

// register makes a connection addressable and joins the (valid) groups
// its token names.
func (h *Hub) register(c *conn, groups []string) {
	valid := slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return !validGroup(g) })
	h.lifetime.Register(c, c.space, c.id, c.user, &c.groups, valid)
}

func (h *Hub) untrack(c *conn) { h.lifetime.Untrack(c, c.space, c.id, c.user, c.groups) }

func (h *Hub) joinLocked(c *conn, group string) { c.space.Join(c, c.id, group, &c.groups) }

func (h *Hub) leaveLocked(c *conn, group string) { c.space.Leave(c, group, c.groups) }

// CloseAll tells every client the hub is shutting down; each connection
// then ends.
func (h *Hub) CloseAll() {
	for _, c := range h.lifetime.Open() {
		c.requestClose(closeShutdown)
	}
}

// Drop ends up to n open connections (every one when n <= 0) as how
// says, and returns how many it ended.
func (h *Hub) Drop(how core.Drill, n int) int {
	return h.lifetime.Drop(n, func(c *conn) bool { return !c.closed.Load() }, func(c *conn) { c.drop(how) })
}

// drop ends c as how says.
func (c *conn) drop(how core.Drill) {
	switch how {
	case core.DrillCloseError:
		c.requestClose(closeCause{code: websocket.CloseInternalServerErr, reason: core.DrillText, quiet: true})
	case core.DrillCloseReconnect:
		c.requestClose(closeCause{code: websocket.CloseServiceRestart, quiet: true})
	case core.DrillDisconnect:
		c.requestClose(closeCause{code: websocket.CloseGoingAway, reason: core.DrillText})
	case core.DrillAbort, core.DrillRestart:
		c.requestClose(closeCause{quiet: true})
		if c.ws != nil {
			_ = c.ws.NetConn().Close()
		}
	}
}

// Beat is the Web PubSub side of the hub's heartbeat: WebSocket pings to
// quiet clients, and a close for those that sent nothing (not even a pong)
// within the client timeout.
func (h *Hub) Beat(now int64) {
	for _, c := range h.lifetime.Open() {
		switch {
		case h.Config.IdleTimeout > 0 && now-c.lastRead.Load() > int64(h.Config.IdleTimeout):
			c.log.Info().Dur("idle_timeout", h.Config.IdleTimeout).Msg("idle connection cut")
			c.drop(core.DrillAbort)
		case now-c.lastRead.Load() > int64(h.Config.ClientTimeout):
			c.log.Info().Dur("timeout", h.Config.ClientTimeout).Msg("client timed out")
			c.requestClose(closeTimeout)
		case now-c.lastWrite.Load() >= int64(h.Config.KeepAliveInterval):
			c.enqueuePing()
		}
	}
}

// validGroup applies the service's rule for group names: 1 to 1024
// characters.
func validGroup(g string) bool {
	n := len([]rune(g))
	return n >= 1 && n <= 1024
}
