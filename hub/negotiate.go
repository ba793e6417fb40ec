package hub

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
)

// maxNegotiateVersion is the newest negotiate protocol the hub speaks.
const maxNegotiateVersion = 1

// maxPendingNegotiations bounds tokens waiting for their transport, so a
// negotiate flood cannot grow memory without limit.
const maxPendingNegotiations = 1 << 16

// servedTransports lists exactly what the hub serves; Server-Sent Events
// carry text only.
var servedTransports = []signalr.AvailableTransport{
	{Transport: "WebSockets", TransferFormats: []signalr.TransferFormat{signalr.TextFormat, signalr.BinaryFormat}},
	{Transport: "ServerSentEvents", TransferFormats: []signalr.TransferFormat{signalr.TextFormat}},
	{Transport: "LongPolling", TransferFormats: []signalr.TransferFormat{signalr.TextFormat, signalr.BinaryFormat}},
}

// serveNegotiate answers a negotiate for a connection of who.space (and
// who.user); the id is chosen here.
func (h *Hub) serveNegotiate(w http.ResponseWriter, r *http.Request, who identity) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		transport.WriteText(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	version, ok := negotiateVersion(r.URL.Query().Get("negotiateVersion"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, signalr.NegotiateError{Error: "The client requested an invalid protocol version."})
		return
	}
	if h.isClosed() {
		transport.WriteText(w, http.StatusServiceUnavailable, "The hub is shutting down.")
		return
	}
	who.id = newID()
	resp := signalr.NegotiateResponse{NegotiateVersion: version, ConnectionID: who.id, AvailableTransports: servedTransports}
	token := resp.ConnectionID // version 0 clients use the id as the token
	if version > 0 {
		resp.ConnectionToken = newID()
		token = resp.ConnectionToken
	}
	switch h.tokens.add(token, who, h.now()+int64(negotiateTTL), h.opts.connectionQuota()) {
	case http.StatusTooManyRequests:
		h.refuseOverQuota(w)
	case http.StatusServiceUnavailable:
		transport.WriteText(w, http.StatusServiceUnavailable, "Too many pending connections.")
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// refuseOverQuota answers 429 as Azure SignalR Service does when its
// connection quota is used up.
func (h *Hub) refuseOverQuota(w http.ResponseWriter) {
	h.metrics.throttled.WithLabelValues(throttle.ConnectionLimit).Inc()
	transport.WriteText(w, http.StatusTooManyRequests, throttle.ConnectionLimitText)
}

// negotiateVersion picks the lower of the client's version and the hub's;
// a missing version means 0.
func negotiateVersion(q string) (int, bool) {
	if q == "" {
		return 0, true
	}
	v, err := strconv.Atoi(q)
	if err != nil || v < 0 {
		return 0, false
	}
	return min(v, maxNegotiateVersion), true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v) // only hub-built structs of strings and ints
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// tokenStore maps connection tokens to connections from negotiate until the
// connection ends. Tokens never used expire so memory stays bounded. It
// also counts connections against the quota: every token, plus the
// WebSockets that connected without negotiating.
type tokenStore struct {
	mu      sync.Mutex
	entries map[string]*tokenEntry
	direct  int
}

type tokenEntry struct {
	identity
	expires int64 // hub clock; only while no transport holds the token
	kind    transport.Kind
	conn    *conn // Server-Sent Events and Long Polling: for POST, DELETE and polls
}

func newTokenStore() *tokenStore { return &tokenStore{entries: make(map[string]*tokenEntry)} }

// add stores a negotiated token: 429 past quota (0 = none), 503 when too
// many tokens wait for their transport.
func (s *tokenStore) add(token string, who identity, expires int64, quota int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case quota > 0 && len(s.entries)+s.direct >= quota:
		return http.StatusTooManyRequests
	case len(s.entries) >= maxPendingNegotiations:
		return http.StatusServiceUnavailable
	}
	s.entries[token] = &tokenEntry{identity: who, expires: expires}
	return http.StatusOK
}

// reserveDirect counts a connection that skipped negotiate, unless the
// quota is full.
func (s *tokenStore) reserveDirect(quota int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if quota > 0 && len(s.entries)+s.direct >= quota {
		return false
	}
	s.direct++
	return true
}

func (s *tokenStore) releaseDirect() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.direct--
}

// claim binds token to a transport of kind, or finds the Long Polling
// connection it is bound to (claimed is then false). The status is 404 for
// an unknown or expired token, 409 when a transport of the same kind
// already holds it, 400 for a different kind.
func (s *tokenStore) claim(token string, kind transport.Kind, now int64) (e tokenEntry, claimed bool, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.entries[token]
	switch {
	case p == nil || (p.kind == transport.KindNone && p.expires < now):
		return tokenEntry{}, false, http.StatusNotFound
	case p.kind == transport.KindNone:
		p.kind = kind
		return *p, true, http.StatusOK
	case p.kind != kind:
		return tokenEntry{}, false, http.StatusBadRequest
	case kind == transport.KindLongPolling && p.conn != nil:
		return *p, false, http.StatusOK
	}
	return tokenEntry{}, false, http.StatusConflict
}

// attach records the running connection of an HTTP transport.
func (s *tokenStore) attach(token string, c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.entries[token]; p != nil {
		p.conn = c
	}
}

// lookup returns the running connection bound to token and its kind, for a
// POST or DELETE: 404 when there is none (yet, or any more).
func (s *tokenStore) lookup(token string) (*conn, transport.Kind, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.entries[token]
	switch {
	case p == nil:
		return nil, transport.KindNone, http.StatusNotFound
	case p.kind == transport.KindWebSockets:
		return nil, transport.KindWebSockets, http.StatusOK
	case p.conn == nil:
		return nil, p.kind, http.StatusNotFound
	}
	return p.conn, p.kind, http.StatusOK
}

// release forgets token once its connection ended.
func (s *tokenStore) release(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, token)
}

func (s *tokenStore) expire(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for token, e := range s.entries {
		if e.kind == transport.KindNone && e.expires < now {
			delete(s.entries, token)
		}
	}
}

func (s *tokenStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
