package clientconn

import (
	"net/http"
	"time"
)

// Settings are the options every client takes alike. Each client's Options
// embeds them, says what they mean over its own transports and keeps its
// own defaults (its Default* constants), which it hands to WithDefaults.
type Settings struct {
	// HandshakeTimeout bounds the opening of the transport and,
	// separately, the wait for the hub's handshake answer.
	HandshakeTimeout time.Duration
	// KeepAliveInterval is how long the client may stay silent before it
	// sends a ping.
	KeepAliveInterval time.Duration
	// ServerTimeout is how long the server may stay silent before the
	// connection is considered dead.
	ServerTimeout time.Duration
	// WriteTimeout bounds the write of one message: a write that cannot
	// finish in time means the server stopped reading (a half-open
	// connection), and the connection ends with ErrServerTimeout. Zero
	// leaves writes bounded by their context alone; it has no default.
	WriteTimeout time.Duration
	// RoundTripInterval is how often the connection measures its
	// transport's round trip and tells Observer.RoundTrip: at once, then
	// every interval (DefaultRoundTripInterval), or less often when the
	// process's connections would together measure more than
	// MaxRoundTripsPerSecond.
	RoundTripInterval time.Duration
	// MaxMessageSize bounds one message from the server, so a hostile
	// server cannot exhaust memory.
	MaxMessageSize int64
	// HTTPClient (http.DefaultClient when nil) lends the WebSocket upgrade
	// its proxy, dialer and TLS configuration when its Transport is an
	// *http.Transport (WebSocketDialer).
	HTTPClient *http.Client
	// Observer (NopObserver when nil) is told what crosses the wire and how
	// long it took.
	Observer Observer
}

// The defaults every client shares, for the settings their own defaults
// leave unset.
const (
	// DefaultHandshakeTimeout is the official SignalR clients' handshake
	// timeout, which the Web PubSub client takes too.
	DefaultHandshakeTimeout = 15 * time.Second
	// DefaultMaxMessageSize is large enough for any benchmark payload and
	// small enough that a hostile server cannot make a connection hold
	// much.
	DefaultMaxMessageSize = 1 << 20
)

// sharedDefaults fill in what a client's own defaults leave unset.
var sharedDefaults = Settings{
	HandshakeTimeout:  DefaultHandshakeTimeout,
	RoundTripInterval: DefaultRoundTripInterval,
	MaxMessageSize:    DefaultMaxMessageSize,
	HTTPClient:        http.DefaultClient,
	Observer:          NopObserver{},
}

// WithDefaults returns s with every unset field taken from def, the
// client's own defaults, and then what def leaves unset from the shared
// ones: DefaultHandshakeTimeout, DefaultRoundTripInterval,
// DefaultMaxMessageSize, http.DefaultClient and NopObserver. WriteTimeout
// stays as it is: zero there means no bound of its own.
func (s Settings) WithDefaults(def Settings) Settings {
	return s.fill(def).fill(sharedDefaults)
}

func (s Settings) fill(def Settings) Settings {
	s.HandshakeTimeout = OrDefault(s.HandshakeTimeout, def.HandshakeTimeout)
	s.KeepAliveInterval = OrDefault(s.KeepAliveInterval, def.KeepAliveInterval)
	s.ServerTimeout = OrDefault(s.ServerTimeout, def.ServerTimeout)
	s.RoundTripInterval = OrDefault(s.RoundTripInterval, def.RoundTripInterval)
	s.MaxMessageSize = OrDefault(s.MaxMessageSize, def.MaxMessageSize)
	if s.HTTPClient == nil {
		s.HTTPClient = def.HTTPClient
	}
	if s.Observer == nil {
		s.Observer = def.Observer
	}
	return s
}
