package hub

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/hubprobe/hubprobe/probe"
)

// maxNegotiateVersion is the newest negotiate protocol the hub speaks.
const maxNegotiateVersion = 1

// maxPendingNegotiations bounds tokens waiting for their transport, so a
// negotiate flood cannot grow memory without limit.
const maxPendingNegotiations = 1 << 16

type availableTransport struct {
	Transport       string                 `json:"transport"`
	TransferFormats []probe.TransferFormat `json:"transferFormats"`
}

// servedTransports lists only what the hub serves.
var servedTransports = []availableTransport{
	{Transport: "WebSockets", TransferFormats: []probe.TransferFormat{probe.TextFormat, probe.BinaryFormat}},
}

type negotiateResponse struct {
	NegotiateVersion    int                  `json:"negotiateVersion"`
	ConnectionID        string               `json:"connectionId"`
	ConnectionToken     string               `json:"connectionToken,omitempty"`
	AvailableTransports []availableTransport `json:"availableTransports"`
}

type negotiateError struct {
	Error string `json:"error"`
}

func (h *Hub) serveNegotiate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	version, ok := negotiateVersion(r.URL.Query().Get("negotiateVersion"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, negotiateError{Error: "The client requested an invalid protocol version."})
		return
	}
	if h.isClosed() {
		http.Error(w, "hub is shutting down", http.StatusServiceUnavailable)
		return
	}
	resp := negotiateResponse{NegotiateVersion: version, ConnectionID: newID(), AvailableTransports: servedTransports}
	token := resp.ConnectionID // version 0 clients use the id as the token
	if version > 0 {
		resp.ConnectionToken = newID()
		token = resp.ConnectionToken
	}
	if !h.tokens.add(token, resp.ConnectionID, h.now()+int64(negotiateTTL)) {
		http.Error(w, "too many pending connections", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, resp)
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

// tokenStore maps connection tokens to connection ids from negotiate until
// the connection ends. Tokens never used expire so memory stays bounded.
type tokenStore struct {
	mu      sync.Mutex
	entries map[string]*tokenEntry
}

type tokenEntry struct {
	id        string
	expires   int64 // hub clock; only while not connected
	connected bool
}

func newTokenStore() *tokenStore { return &tokenStore{entries: make(map[string]*tokenEntry)} }

func (s *tokenStore) add(token, id string, expires int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.entries) >= maxPendingNegotiations {
		return false
	}
	s.entries[token] = &tokenEntry{id: id, expires: expires}
	return true
}

// claim binds a transport to token and returns the connection id: 404 for an
// unknown or expired token, 409 when a transport already holds it. An empty
// token (negotiation skipped) gets a fresh id.
func (s *tokenStore) claim(token string, now int64) (string, int) {
	if token == "" {
		return newID(), http.StatusOK
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[token]
	switch {
	case e == nil || (!e.connected && e.expires < now):
		return "", http.StatusNotFound
	case e.connected:
		return "", http.StatusConflict
	}
	e.connected = true
	return e.id, http.StatusOK
}

// release forgets token once its connection ended.
func (s *tokenStore) release(token string) {
	if token == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, token)
}

func (s *tokenStore) expire(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for token, e := range s.entries {
		if !e.connected && e.expires < now {
			delete(s.entries, token)
		}
	}
}

func (s *tokenStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
