package hub

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// The emulation of Azure Web PubSub's data plane, beside the SignalR one:
// clients connect at /client/hubs/{hub}?access_token=... with the
// json.webpubsub.azure.v1 or json.reliable.webpubsub.azure.v1 subprotocol
// (or none, as a simple WebSocket client), the REST API is under
// /api/hubs/{hub} with a Web PubSub api-version (webpubsub_rest.go), and
// user events go to the event handler (webpubsub_upstream.go). Hub names,
// groups and users are the Web PubSub service's own: they never mix with
// the SignalR emulation's.

// wpsHubPrefix is the path of the client endpoint, before the hub name.
const wpsHubPrefix = "/client/hubs/"

// Query parameters a reliable client adds when it tries to recover a
// dropped connection.
const (
	wpsRecoverID    = "awps_connection_id"
	wpsRecoverToken = "awps_reconnection_token"
)

// wpsState is the Web PubSub half of the hub. Its maps are guarded by
// Hub.mu, like the SignalR spaces.
type wpsState struct {
	upgrader *websocket.Upgrader
	spaces   map[string]*wpsSpace
	live     map[*wpsConn]struct{} // every open Web PubSub socket
	events   *upstream             // nil without an event handler
}

// wpsSpace is one Web PubSub hub name's connections.
type wpsSpace struct {
	name string
	roster[*wpsConn]
	limiter *rateLimiter // nil when messages are not limited
}

func newWPSState(h *Hub) *wpsState {
	up := transport.NewUpgrader()
	up.Subprotocols = []string{webpubsub.ProtocolJSONReliable, webpubsub.ProtocolJSON}
	s := &wpsState{upgrader: up, spaces: make(map[string]*wpsSpace), live: make(map[*wpsConn]struct{})}
	if h.opts.WebPubSubEventHandler != "" {
		s.events = newUpstream(h)
	}
	return s
}

// wpsSpaceNamed returns the state of hub name, creating it unless the hub
// already keeps maxSpaces of them.
func (h *Hub) wpsSpaceNamed(name string) (*wpsSpace, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.wps.spaces[name]; s != nil {
		return s, true
	}
	if len(h.wps.spaces) >= maxSpaces {
		return nil, false
	}
	s := &wpsSpace{name: name, roster: newRoster[*wpsConn]()}
	if h.opts.MessageRateLimit > 0 {
		s.limiter = newRateLimiter(h.opts.MessageRateLimit)
	}
	h.wps.spaces[name] = s
	return s, true
}

// wpsHubFromPath returns the hub name of a client endpoint path,
// lower-cased, and the escaped path a client token's audience names.
func wpsHubFromPath(r *http.Request) (name, audiencePath string, ok bool) {
	escaped := strings.TrimSuffix(r.URL.EscapedPath(), "/")
	raw, found := strings.CutPrefix(escaped, wpsHubPrefix)
	if !found || strings.Contains(raw, "/") {
		return "", "", false
	}
	name, err := url.PathUnescape(raw)
	if err != nil || !webpubsub.ValidHub(name) {
		return "", "", false
	}
	return strings.ToLower(name), escaped, true
}

// serveWebPubSubClient opens a client connection: token checked against
// the client URL, then the connection quota the SignalR side shares.
func (h *Hub) serveWebPubSubClient(w http.ResponseWriter, r *http.Request) {
	name, audiencePath, ok := wpsHubFromPath(r)
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
	case r.URL.Query().Has(wpsRecoverID):
		h.refuseRecovery(w, r)
		return
	}
	if _, err := h.authorize(r, audiencePath); err != nil {
		transport.WriteText(w, http.StatusUnauthorized, h.unauthorized(err))
		return
	}
	claims, err := parseWPSClaims(bearerToken(r))
	if err != nil {
		transport.WriteText(w, http.StatusUnauthorized, "Unauthorized.")
		return
	}
	h.admitWebPubSub(w, r, name, claims)
}

// admitWebPubSub checks that the hub takes one more connection and runs it.
func (h *Hub) admitWebPubSub(w http.ResponseWriter, r *http.Request, name string, claims wpsClaims) {
	if h.isClosed() {
		transport.WriteText(w, http.StatusServiceUnavailable, errMsgShuttingDown)
		return
	}
	s, ok := h.wpsSpaceNamed(name)
	if !ok {
		transport.WriteText(w, http.StatusServiceUnavailable, "Too many hub names.")
		return
	}
	if !h.tokens.reserveDirect(h.opts.connectionQuota()) {
		h.refuseOverQuota(w)
		return
	}
	defer h.tokens.releaseDirect()
	ws, err := h.wps.upgrader.Upgrade(w, r, nil)
	if err != nil {
		h.log.Debug().Err(err).Msg("websocket upgrade failed")
		return
	}
	c := newWPSConn(h, ws, ws.Subprotocol(), s, claims, r.Host)
	if !h.trackWPS(c) {
		_ = ws.Close()
		return
	}
	defer h.conns.Done()
	c.serve(claims.Groups)
}

// refuseRecovery answers a reliable client's attempt to recover a dropped
// connection. This hub keeps no state for dropped connections, so it says
// what the service says when the state is gone: close code 1008, after
// which the official client stops recovering and opens a new connection.
func (h *Hub) refuseRecovery(w http.ResponseWriter, r *http.Request) {
	ws, err := h.wps.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "The connection cannot be recovered.")
	_ = ws.WriteControl(websocket.CloseMessage, msg, deadlineIn(closeGrace))
	_ = ws.Close()
}

// trackWPS admits a new socket unless the hub is closing.
func (h *Hub) trackWPS(c *wpsConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wps.live[c] = struct{}{}
	h.conns.Add(1)
	return true
}

// registerWPS makes a connection addressable and joins the groups its
// token names.
func (h *Hub) registerWPS(c *wpsConn, groups []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.space.enter(c, c.id, c.user)
	for _, g := range groups {
		if validWPSGroup(g) {
			h.joinWPSLocked(c, g)
		}
	}
	h.metrics.connections.Inc()
}

func (h *Hub) untrackWPS(c *wpsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.wps.live, c)
	if c.space.exit(c, c.id, c.user, c.groups) {
		h.metrics.connections.Dec()
	}
}

func (h *Hub) joinWPSLocked(c *wpsConn, group string) { c.space.join(c, c.id, group, &c.groups) }

func (h *Hub) leaveWPSLocked(c *wpsConn, group string) { c.space.leave(c, group, c.groups) }

// wpsLiveLocked lists the open Web PubSub sockets; the caller holds Hub.mu.
func (h *Hub) wpsLiveLocked() []*wpsConn {
	live := make([]*wpsConn, 0, len(h.wps.live))
	for c := range h.wps.live {
		live = append(live, c)
	}
	return live
}

// beatWebPubSub is the heartbeat's Web PubSub half: WebSocket pings to
// quiet clients, and a close for those that sent nothing (not even a pong)
// within the client timeout.
func (h *Hub) beatWebPubSub(now int64) {
	h.mu.RLock()
	conns := h.wpsLiveLocked()
	h.mu.RUnlock()
	for _, c := range conns {
		switch {
		case now-c.lastRead.Load() > int64(h.opts.ClientTimeout):
			c.log.Info().Dur("timeout", h.opts.ClientTimeout).Msg("client timed out")
			c.requestClose(wpsCloseTimeout)
		case now-c.lastWrite.Load() >= int64(h.opts.KeepAliveInterval):
			c.enqueuePing()
		}
	}
}

// validWPSGroup applies the service's rule for group names: 1 to 1024
// characters.
func validWPSGroup(g string) bool {
	n := len([]rune(g))
	return n >= 1 && n <= 1024
}
