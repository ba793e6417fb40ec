package aspnetclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Transports Dial speaks, as Options.Transport names them; the classic
// client's names (webSockets, serverSentEvents, longPolling,
// foreverFrame) are accepted too.
const (
	TransportWebSockets   = "websockets"
	TransportSSE          = "sse"
	TransportLongPolling  = "longpolling"
	TransportForeverFrame = "foreverframe"
)

// wireNames are the transports' names on the wire: the transport= query
// value of every request.
var wireNames = map[string]string{
	TransportWebSockets:   "webSockets",
	TransportSSE:          "serverSentEvents",
	TransportLongPolling:  "longPolling",
	TransportForeverFrame: "foreverFrame",
}

// The defaults of Options that are the classic client's own; the others
// are clientconn's.
const (
	// DefaultServerTimeout bounds the server's silence when negotiate
	// gives no KeepAliveTimeout (the server's default is 20 s).
	DefaultServerTimeout = 30 * time.Second
	// DefaultKeepAliveInterval is the JavaScript client's pingInterval: a
	// ping request every 5 minutes keeps the server's session alive.
	DefaultKeepAliveInterval = 5 * time.Minute
	// DefaultPollTimeout bounds one long poll when negotiate gives no
	// ConnectionTimeout; the JS client waits ConnectionTimeout + 10 s.
	DefaultPollTimeout = 120 * time.Second
)

// Handler receives the arguments of a hub's call to the client. They
// alias the connection's read buffer, which is reused once the handler
// returns: a handler copies what it keeps. It runs on the connection's
// read goroutine and must not block.
type Handler func(args []json.RawMessage)

// Options configures Dial. Zero values take the defaults.
type Options struct {
	// URL is the app server's SignalR endpoint (http(s) or ws(s)), by
	// default at /signalr. Its query is kept on every request until a
	// negotiate redirect replaces it with the redirect's own.
	URL string
	// Hub is the hub the connection subscribes to (connectionData) and
	// invokes; hub names are matched case-insensitively, as the
	// JavaScript client lowercases them.
	Hub string
	// Transport is one of the Transport* constants (TransportWebSockets by
	// default) or its classic name; FallbackTransports are tried in order
	// when negotiate does not offer it (TryWebSockets false) or, for
	// Forever Frame, after a redirect to Azure SignalR Service, which
	// takes bearer tokens that an iframe cannot send.
	Transport          string
	FallbackTransports []string
	// AccessToken is sent as "Authorization: Bearer" until a negotiate
	// redirect supplies another one.
	AccessToken string
	// Headers are added to every HTTP request, the WebSocket upgrade included.
	Headers http.Header

	// Settings are what every client takes alike. HandshakeTimeout bounds
	// the transport's connect (up to the init message) and, separately,
	// the start request. ServerTimeout is the server's allowed silence
	// when negotiate names no KeepAliveTimeout (which it uses otherwise).
	// KeepAliveInterval is how often an idle connection sends the ping
	// request. RoundTripInterval times a WebSocket ping to its pong, or
	// on the HTTP transports the ping request, on the connection's own
	// HTTP pool. WriteTimeout bounds a WebSocket write or a send POST.
	clientconn.Settings
	// PollTimeout bounds one long poll when negotiate gives no
	// ConnectionTimeout.
	PollTimeout time.Duration
	// Handlers maps the hub's client methods (matched case-insensitively)
	// to their handlers.
	Handlers map[string]Handler
	// OnReconnected, when set, is told each time the connection was
	// re-established after its transport dropped.
	OnReconnected func()
}

// withDefaults returns a copy of o with zero values filled in and the
// transports normalised, or an error for settings Dial cannot honour.
func (o Options) withDefaults() (Options, []string, error) {
	if strings.TrimSpace(o.Hub) == "" {
		return o, nil, fmt.Errorf("probe: %w: no hub name", errOptions)
	}
	candidates, err := transportCandidates(o.Transport, o.FallbackTransports)
	if err != nil {
		return o, nil, err
	}
	o.Transport = candidates[0]
	o.Settings = o.WithDefaults(clientconn.Settings{KeepAliveInterval: DefaultKeepAliveInterval, ServerTimeout: DefaultServerTimeout})
	o.PollTimeout = clientconn.OrDefault(o.PollTimeout, DefaultPollTimeout)
	return o, candidates, nil
}

// NormalizeTransport accepts hubprobe's names and the classic ones,
// case-insensitively; "" means WebSockets.
func NormalizeTransport(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "":
		return TransportWebSockets, nil
	case "serversentevents":
		return TransportSSE, nil
	}
	if _, ok := wireNames[n]; ok {
		return n, nil
	}
	return "", fmt.Errorf("probe: %w: unknown transport %q (valid: websockets, sse, longpolling, foreverframe)", errOptions, name)
}

func transportCandidates(first string, fallbacks []string) ([]string, error) {
	out := make([]string, 0, 1+len(fallbacks))
	for _, raw := range append([]string{first}, fallbacks...) {
		name, err := NormalizeTransport(raw)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}
