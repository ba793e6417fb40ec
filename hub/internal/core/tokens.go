package core

import (
	"net/http"
	"sync"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/throttle"
)

// maxPendingNegotiations bounds tokens waiting for their transport, so a
// negotiate flood cannot grow memory without limit.
const maxPendingNegotiations = 1 << 16

// quota counts the connections charged against the connection quota,
// across every protocol: each connection token (from negotiate until its
// connection ends, or it expires unused) and each connection that needs
// none.
type quota struct {
	mu    sync.Mutex
	limit int // 0: none
	used  int
}

// ReserveConnection charges one connection to the quota, unless it is used
// up.
func (h *Host) ReserveConnection() bool {
	q := &h.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit > 0 && q.used >= q.limit {
		return false
	}
	q.used++
	return true
}

// ReleaseConnection gives back what ReserveConnection took.
func (h *Host) ReleaseConnection() {
	q := &h.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used--
}

// RefuseOverQuota answers 429 as Azure SignalR Service does when its
// connection quota is used up.
func (h *Host) RefuseOverQuota(w http.ResponseWriter) {
	h.Metrics.Throttled.WithLabelValues(throttle.ConnectionLimit).Inc()
	transport.WriteText(w, http.StatusTooManyRequests, throttle.ConnectionLimitText)
}

// Tokens maps connection tokens to connections from negotiate until the
// connection ends: who the connection is (W, fixed at negotiate) and, on
// the HTTP transports, the running connection (C) that later requests
// find. Tokens never used expire, so memory stays bounded; every token
// counts against the connection quota.
type Tokens[W any, C comparable] struct {
	host    *Host
	mu      sync.Mutex
	entries map[string]*Token[W, C]
}

// Token is one token's entry.
type Token[W any, C comparable] struct {
	Who     W
	Kind    transport.Kind // the transport holding it; KindNone until one does
	Conn    C              // Server-Sent Events and Long Polling: for POST, DELETE and polls
	expires int64          // hub clock; only while no transport holds the token
}

// NewTokens is an empty store charging h's connection quota.
func NewTokens[W any, C comparable](h *Host) *Tokens[W, C] {
	return &Tokens[W, C]{host: h, entries: make(map[string]*Token[W, C])}
}

// Add stores a negotiated token, unused until hub time expires: 429 past
// the quota, 503 when too many tokens wait for their transport.
func (s *Tokens[W, C]) Add(token string, who W, expires int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.host.ReserveConnection() {
		return http.StatusTooManyRequests
	}
	if len(s.entries) >= maxPendingNegotiations {
		s.host.ReleaseConnection()
		return http.StatusServiceUnavailable
	}
	s.entries[token] = &Token[W, C]{Who: who, expires: expires}
	return http.StatusOK
}

// Claim binds token to a transport of kind, or finds the Long Polling
// connection it is bound to (claimed is then false). The status is 404
// for an unknown or expired token, 409 when a transport of the same kind
// already holds it, 400 for a different kind.
func (s *Tokens[W, C]) Claim(token string, kind transport.Kind, now int64) (e Token[W, C], claimed bool, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var none C
	p := s.entries[token]
	switch {
	case p == nil || (p.Kind == transport.KindNone && p.expires < now):
		return Token[W, C]{}, false, http.StatusNotFound
	case p.Kind == transport.KindNone:
		p.Kind = kind
		return *p, true, http.StatusOK
	case p.Kind != kind:
		return Token[W, C]{}, false, http.StatusBadRequest
	case kind == transport.KindLongPolling && p.Conn != none:
		return *p, false, http.StatusOK
	}
	return Token[W, C]{}, false, http.StatusConflict
}

// Attach records the running connection of an HTTP transport.
func (s *Tokens[W, C]) Attach(token string, c C) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.entries[token]; p != nil {
		p.Conn = c
	}
}

// Lookup returns the running connection bound to token and its kind, for
// a POST or DELETE: 404 when there is none (yet, or any more).
func (s *Tokens[W, C]) Lookup(token string) (C, transport.Kind, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var none C
	p := s.entries[token]
	switch {
	case p == nil:
		return none, transport.KindNone, http.StatusNotFound
	case p.Kind == transport.KindWebSockets:
		return none, transport.KindWebSockets, http.StatusOK
	case p.Conn == none:
		return none, p.Kind, http.StatusNotFound
	}
	return p.Conn, p.Kind, http.StatusOK
}

// Release forgets token once its connection ended.
func (s *Tokens[W, C]) Release(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[token]; ok {
		delete(s.entries, token)
		s.host.ReleaseConnection()
	}
}

// Expire forgets the tokens no transport took before hub time now.
func (s *Tokens[W, C]) Expire(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for token, e := range s.entries {
		if e.Kind == transport.KindNone && e.expires < now {
			delete(s.entries, token)
			s.host.ReleaseConnection()
		}
	}
}

// Len is how many tokens the store holds.
func (s *Tokens[W, C]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
