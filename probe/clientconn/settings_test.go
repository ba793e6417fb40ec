package clientconn

import (
	"net/http"
	"testing"
	"time"
)

func TestWithDefaultsTakesTheClientsThenTheShared(t *testing.T) {
	own := Settings{KeepAliveInterval: 20 * time.Second, ServerTimeout: 120 * time.Second, HandshakeTimeout: 3 * time.Second}
	got := Settings{ServerTimeout: -time.Second}.WithDefaults(own)
	want := Settings{
		HandshakeTimeout:  3 * time.Second, // the client's, over the shared one
		KeepAliveInterval: 20 * time.Second,
		ServerTimeout:     120 * time.Second,
		RoundTripInterval: DefaultRoundTripInterval,
		MaxMessageSize:    DefaultMaxMessageSize,
		HTTPClient:        http.DefaultClient,
		Observer:          NopObserver{},
	}
	if got != want {
		t.Errorf("defaults filled in:\n got %+v\nwant %+v", got, want)
	}
	if got := (Settings{}).WithDefaults(Settings{}); got.HandshakeTimeout != DefaultHandshakeTimeout {
		t.Errorf("HandshakeTimeout = %s with no client default, want the shared %s", got.HandshakeTimeout, DefaultHandshakeTimeout)
	}
}

func TestWithDefaultsKeepsWhatIsSet(t *testing.T) {
	client := &http.Client{}
	obs := &NopObserver{}
	set := Settings{
		HandshakeTimeout:  time.Second,
		KeepAliveInterval: 2 * time.Second,
		ServerTimeout:     3 * time.Second,
		WriteTimeout:      4 * time.Second,
		RoundTripInterval: 5 * time.Second,
		MaxMessageSize:    64,
		HTTPClient:        client,
		Observer:          obs,
	}
	own := Settings{HandshakeTimeout: time.Minute, KeepAliveInterval: time.Minute, ServerTimeout: time.Minute,
		WriteTimeout: time.Minute, RoundTripInterval: time.Minute, MaxMessageSize: 1 << 30}
	if got := set.WithDefaults(own); got != set {
		t.Errorf("set values changed:\n got %+v\nwant %+v", got, set)
	}
	if got := (Settings{}).WithDefaults(own); got.WriteTimeout != 0 {
		t.Errorf("WriteTimeout = %s, want zero (no bound) whatever the defaults", got.WriteTimeout)
	}
}

func TestTransportHTTPClientPoolsUnlessTheCallerBroughtOne(t *testing.T) {
	pooled := PooledHTTPClient()
	for name, s := range map[string]Settings{"unset": {}, "http.DefaultClient": {HTTPClient: http.DefaultClient}} {
		if got := s.TransportHTTPClient(); got != pooled {
			t.Errorf("%s: the transports use %p, want the pooled client %p", name, got, pooled)
		}
	}
	own := &http.Client{Timeout: time.Second}
	if got := (Settings{HTTPClient: own}).TransportHTTPClient(); got != own {
		t.Errorf("a caller's own client was replaced by %p", got)
	}
	if n := pooled.Transport.(*http.Transport).MaxIdleConnsPerHost; n != maxIdleConnsPerHost {
		t.Errorf("the pool keeps %d idle connections per host, want %d", n, maxIdleConnsPerHost)
	}
}
