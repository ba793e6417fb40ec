package signalrclient

import (
	"net/http"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// Defaults for the zero values of Options, matching the SignalR clients.
const (
	DefaultHandshakeTimeout  = 15 * time.Second
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultServerTimeout     = 30 * time.Second
	DefaultMaxMessageSize    = 1 << 20
)

// Options configures Dial. Zero values take the defaults above.
type Options struct {
	// URL is the hub endpoint: http(s), or ws(s) which is mapped to
	// http(s) for negotiate. Its query (for example hub=) is kept.
	URL string
	// Transport is TransportWebSockets (the default), TransportSSE or
	// TransportLongPolling; the negotiate names (ServerSentEvents,
	// LongPolling) are accepted too. Negotiate must offer it with the hub
	// protocol's transfer format, or Dial fails in clientconn.PhaseNegotiate.
	// MessagePack cannot go over server-sent events, which carry text only.
	Transport string
	// FallbackTransports are tried in order when negotiate does not offer
	// Transport (with the needed transfer format). Empty means no fallback.
	FallbackTransports []string
	// Protocol is the hub protocol; JSONProtocol{} by default.
	Protocol signalr.HubProtocol
	// AccessToken is sent as "Authorization: Bearer" on negotiate and on
	// the transport, until a negotiate redirect supplies another one.
	AccessToken string
	// Headers are added to every HTTP request, the WebSocket upgrade included.
	Headers http.Header
	// SkipNegotiation connects the WebSocket straight to URL, without an
	// id. Server-sent events and long polling need negotiate.
	SkipNegotiation bool

	// HandshakeTimeout bounds the WebSocket upgrade (or the wait for the
	// event stream's or first poll's response headers) and, separately,
	// the wait for the hub's handshake response.
	HandshakeTimeout time.Duration
	// KeepAliveInterval is how long the client may stay silent before it
	// sends a Ping.
	KeepAliveInterval time.Duration
	// ServerTimeout is how long the server may stay silent before the
	// connection is considered dead. With long polling every poll answer
	// counts, the empty one a server sends when its poll timeout passes too.
	ServerTimeout time.Duration
	// WriteTimeout bounds the write of one message. A write that cannot
	// finish in time means the server stopped reading (a half-open
	// connection), and the connection ends with clientconn.ErrServerTimeout. Zero
	// leaves writes bounded by their context alone. Server-sent events and
	// long polling queue writes for the next POST, so it bounds each POST
	// instead, and defaults there to ServerTimeout.
	WriteTimeout time.Duration
	// PollTimeout bounds one long-polling request (DefaultPollTimeout);
	// a poll that outlasts it is sent again.
	PollTimeout time.Duration
	// RoundTripInterval is how often the connection measures its
	// transport's round trip and tells Observer.RoundTrip: at once, then
	// every interval (clientconn.DefaultRoundTripInterval). WebSockets
	// time a ping to its pong; server-sent events and long polling a GET
	// of the connection URL without its id, which the connection
	// dispatcher refuses at once, on the transport's own connection pool.
	RoundTripInterval time.Duration
	// MaxMessageSize bounds one buffered record (and the negotiate body is
	// bounded separately), so a hostile server cannot exhaust memory.
	MaxMessageSize int64
	// EnableCompression offers permessage-deflate on the WebSocket.
	EnableCompression bool
	// HTTPClient sends negotiate requests, and every request of server-sent
	// events and long polling (its Timeout does not apply to the event
	// stream and the polls). When nil, negotiate uses http.DefaultClient and
	// those transports a client that keeps more idle connections per host.
	// If its Transport is an *http.Transport, the WebSocket dial uses the
	// same TLS configuration and proxy.
	HTTPClient *http.Client
	Observer   clientconn.Observer
	// Handlers maps server-to-client targets (matched case-insensitively)
	// to their handlers. They are installed before the handshake, so
	// messages sent right after it (such as an OnConnected greeting) are
	// never missed.
	Handlers map[string]Handler
}

// withDefaults returns a copy of o with every zero value filled in, or an
// error for settings Dial cannot honour.
func (o Options) withDefaults() (Options, error) {
	if o.Protocol == nil {
		o.Protocol = signalr.JSONProtocol{}
	}
	candidates, err := o.transportCandidates()
	if err != nil {
		return o, err
	}
	o.Transport = candidates[0]
	o.HandshakeTimeout = clientconn.OrDefault(o.HandshakeTimeout, DefaultHandshakeTimeout)
	o.KeepAliveInterval = clientconn.OrDefault(o.KeepAliveInterval, DefaultKeepAliveInterval)
	o.ServerTimeout = clientconn.OrDefault(o.ServerTimeout, DefaultServerTimeout)
	o.PollTimeout = clientconn.OrDefault(o.PollTimeout, DefaultPollTimeout)
	o.RoundTripInterval = clientconn.OrDefault(o.RoundTripInterval, clientconn.DefaultRoundTripInterval)
	o.MaxMessageSize = clientconn.OrDefault(o.MaxMessageSize, DefaultMaxMessageSize)
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Observer == nil {
		o.Observer = clientconn.NopObserver{}
	}
	return o, nil
}
