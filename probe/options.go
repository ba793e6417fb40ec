package probe

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Defaults for the zero values of Options, matching the SignalR clients.
const (
	DefaultHandshakeTimeout  = 15 * time.Second
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultServerTimeout     = 30 * time.Second
	DefaultMaxMessageSize    = 1 << 20
)

// TransportWebSockets is the only transport Dial speaks today.
const TransportWebSockets = "websockets"

// Options configures Dial. Zero values take the defaults above.
type Options struct {
	// URL is the hub endpoint: http(s), or ws(s) which is mapped to
	// http(s) for negotiate. Its query (for example hub=) is kept.
	URL string
	// Transport is "websockets" (the default); others are not supported yet.
	Transport string
	// Protocol is the hub protocol; JSONProtocol{} by default.
	Protocol HubProtocol
	// AccessToken is sent as "Authorization: Bearer" on negotiate and on
	// the transport, until a negotiate redirect supplies another one.
	AccessToken string
	// Headers are added to every HTTP request, the WebSocket upgrade included.
	Headers http.Header
	// SkipNegotiation connects the WebSocket straight to URL, without an id.
	SkipNegotiation bool

	// HandshakeTimeout bounds the WebSocket upgrade and, separately, the
	// wait for the hub's handshake response.
	HandshakeTimeout time.Duration
	// KeepAliveInterval is how long the client may stay silent before it
	// sends a Ping.
	KeepAliveInterval time.Duration
	// ServerTimeout is how long the server may stay silent before the
	// connection is considered dead.
	ServerTimeout time.Duration
	// MaxMessageSize bounds one buffered record (and the negotiate body is
	// bounded separately), so a hostile server cannot exhaust memory.
	MaxMessageSize int64
	// EnableCompression offers permessage-deflate on the WebSocket.
	EnableCompression bool
	// HTTPClient sends negotiate requests; http.DefaultClient when nil. If
	// its Transport is an *http.Transport, the WebSocket dial uses the same
	// TLS configuration and proxy.
	HTTPClient *http.Client
	Observer   Observer
	// Handlers maps server-to-client targets (matched case-insensitively)
	// to their handlers. They are installed before the handshake, so
	// messages sent right after it (such as an OnConnected greeting) are
	// never missed.
	Handlers map[string]Handler
}

// withDefaults returns a copy of o with every zero value filled in, or an
// error for settings Dial cannot honour.
func (o Options) withDefaults() (Options, error) {
	switch strings.ToLower(o.Transport) {
	case "", TransportWebSockets:
		o.Transport = TransportWebSockets
	default:
		return o, fmt.Errorf("probe: transport %q is not supported yet: %w", o.Transport, errors.ErrUnsupported)
	}
	if o.Protocol == nil {
		o.Protocol = JSONProtocol{}
	}
	o.HandshakeTimeout = orDefault(o.HandshakeTimeout, DefaultHandshakeTimeout)
	o.KeepAliveInterval = orDefault(o.KeepAliveInterval, DefaultKeepAliveInterval)
	o.ServerTimeout = orDefault(o.ServerTimeout, DefaultServerTimeout)
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return o, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
