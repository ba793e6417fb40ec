package signalrclient

import (
	"net/http"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// The defaults of Options that are the SignalR clients' own; the others
// are clientconn's (clientconn.DefaultHandshakeTimeout,
// clientconn.DefaultMaxMessageSize, clientconn.DefaultRoundTripInterval).
const (
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultServerTimeout     = 30 * time.Second
)

// Options configures Dial. Zero values take the defaults.
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

	// Settings are what every client takes alike (clientconn.Settings).
	// Here HandshakeTimeout bounds the WebSocket upgrade (or the wait for
	// the event stream's or first poll's response headers) and,
	// separately, the wait for the hub's handshake response; the
	// keep-alive sends a Ping message. With long polling every poll answer
	// counts against ServerTimeout, the empty one a server sends when its
	// poll timeout passes too. Server-sent events and long polling queue
	// writes for the next POST, so WriteTimeout bounds each POST instead,
	// and defaults there to ServerTimeout. RoundTripInterval times, over
	// WebSockets, a ping to its pong; over server-sent events and long
	// polling a GET of the connection URL without its id, which the
	// connection dispatcher refuses at once, on the transport's own
	// connection pool. MaxMessageSize bounds one buffered record (the
	// negotiate body is bounded separately). HTTPClient sends negotiate
	// requests, and every request of server-sent events and long polling
	// (its Timeout does not apply to the event stream and the polls); when
	// nil, negotiate uses http.DefaultClient and those transports a client
	// that keeps more idle connections per host.
	clientconn.Settings
	// PollTimeout bounds one long-polling request (DefaultPollTimeout);
	// a poll that outlasts it is sent again.
	PollTimeout time.Duration
	// EnableCompression offers permessage-deflate on the WebSocket.
	EnableCompression bool
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
	o.Settings = o.WithDefaults(clientconn.Settings{KeepAliveInterval: DefaultKeepAliveInterval, ServerTimeout: DefaultServerTimeout})
	o.PollTimeout = clientconn.OrDefault(o.PollTimeout, DefaultPollTimeout)
	return o, nil
}
