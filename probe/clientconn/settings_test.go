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
