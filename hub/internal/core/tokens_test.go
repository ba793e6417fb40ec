package core

import (
	"net/http"
	"testing"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// Tokens no transport took before they expired are forgotten; one a
// transport holds stays. (signalrhub's TestUnusedTokensExpire shows the
// heartbeat expiring them in a running hub.)
func TestTokensExpire(t *testing.T) {
	h, err := NewHost(Config{}, NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	s := NewTokens[string, *int](h)
	s.Add("old", "id1", 100)
	s.Add("young", "id2", 300)
	s.Add("held", "id3", 100)
	if e, claimed, status := s.Claim("held", transport.KindWebSockets, 50); status != 200 || !claimed || e.Who != "id3" {
		t.Fatalf("claim = %q %v %d", e.Who, claimed, status)
	}
	if _, _, status := s.Claim("old", transport.KindWebSockets, 150); status != http.StatusNotFound {
		t.Fatalf("claim of an expired token = %d, want 404", status)
	}
	s.Expire(200)
	if got := s.Len(); got != 2 { // young, and held (connected)
		t.Fatalf("%d tokens left, want 2", got)
	}
	if _, claimed, status := s.Claim("young", transport.KindWebSockets, 250); status != http.StatusOK || !claimed {
		t.Fatalf("claim of the young token after expiry = %d %v, want it kept", status, claimed)
	}
}
