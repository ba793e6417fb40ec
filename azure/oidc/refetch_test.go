package oidc_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/azure/oidc"
)

// stepClock is a clock the test moves.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *stepClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

func TestUnknownKidRefetchesAtMostOncePerInterval(t *testing.T) {
	s := entratest.New(t, entratest.Options{})
	v := newVerifier(t, s)
	clock := &stepClock{now: time.Now()}
	oidc.SetClock(v, clock.Now)
	if _, err := verify(t, v, s.Token(t, client, resource)); err != nil {
		t.Fatal(err)
	}
	s.RotateKey(t)
	rotated := s.Token(t, client, resource)
	for i := range 3 {
		if _, err := verify(t, v, rotated); !errors.Is(err, oidc.ErrUnknownKey) {
			t.Fatalf("try %d within the interval: %v, want ErrUnknownKey", i, err)
		}
	}
	if got := s.KeyRequests(); got != 1 {
		t.Errorf("KeyRequests = %d within the interval, want 1", got)
	}
	clock.Add(oidc.MinRefetchInterval + time.Second)
	if _, err := verify(t, v, rotated); err != nil {
		t.Fatalf("the rotated key after the interval: %v", err)
	}
	if _, err := verify(t, v, s.MintUnknownKey(t, entratest.Claims{Audience: resource})); !errors.Is(err, oidc.ErrUnknownKey) {
		t.Errorf("unknown kid right after a fetch: %v", err)
	}
	if got := s.KeyRequests(); got != 2 {
		t.Errorf("KeyRequests = %d, want 2: one refetch for the rotated key, none for the unknown kid that followed", got)
	}
}

func TestUnreachableOrWrongIssuer(t *testing.T) {
	s := entratest.New(t, entratest.Options{})
	cases := []struct{ name, issuer string }{
		{"another tenant (the issuer answers 400)", s.AuthorityHost() + "00000000-0000-4000-8000-000000000000/v2.0"},
		{"a document naming another issuer", strings.TrimSuffix(s.Issuer(), "/v2.0") + "/v2.0/"},
		{"nobody listening", "https://127.0.0.1:1/tenant/v2.0"},
	}
	for _, c := range cases {
		v, err := oidc.NewVerifier(c.issuer, s.HTTPClient())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := verify(t, v, s.Token(t, client, resource)); !errors.Is(err, oidc.ErrKeysUnavailable) {
			t.Errorf("%s: %v, want ErrKeysUnavailable", c.name, err)
		}
	}
}

func TestIssuerMustBeHTTPS(t *testing.T) {
	for _, issuer := range []string{"http://login.example/t/v2.0", "login.example/t", "https://login.example/t?x=1", ""} {
		if _, err := oidc.NewVerifier(issuer, http.DefaultClient); err == nil {
			t.Errorf("NewVerifier(%q) accepted", issuer)
		}
	}
}
