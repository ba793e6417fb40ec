package clientconn

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/hubprobe/hubprobe/internal/rawsock"
	"github.com/hubprobe/hubprobe/internal/redact"
)

// maxIdleConnsPerHost lets the HTTP transports of many probe connections
// to one hub reuse their send connections instead of redialling: the
// default keeps only two idle connections per host.
const maxIdleConnsPerHost = 256

// PooledHTTPClient serves the HTTP transports (server-sent events, long
// polling, Forever Frame) of both SignalR clients when their options leave
// HTTPClient unset.
var PooledHTTPClient = sync.OnceValue(func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no overall limit; idle connections still time out
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	t.DialContext = rawsock.Dialer(t.DialContext)
	return &http.Client{Transport: t}
})

// ForgetIdleConnections closes the idle connections of the HTTP clients
// the probe connections share (http.DefaultClient's, for negotiate, and
// PooledHTTPClient), so that the next connect opens fresh ones. After a
// drop they are suspect: the network that cut one connection cut them
// too, and a connect on one of them fails before its request leaves,
// where a browser's, or the official clients', opens a new connection.
func ForgetIdleConnections() {
	http.DefaultClient.CloseIdleConnections()
	PooledHTTPClient().CloseIdleConnections()
}

// TransportHTTPClient is the client of the HTTP transports: the caller's
// HTTPClient, or PooledHTTPClient when it is unset or http.DefaultClient.
// Negotiate stays on HTTPClient: pooled, each run's negotiate sockets
// would stay open and idle between runs.
func (s Settings) TransportHTTPClient() *http.Client {
	if s.HTTPClient == nil || s.HTTPClient == http.DefaultClient {
		return PooledHTTPClient()
	}
	return s.HTTPClient
}

// ParseEndpoint accepts a hub's http(s) or ws(s) URL and returns its
// http(s) form, without a fragment: where the SignalR clients send
// negotiate.
func ParseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid hub URL: %w", redact.URLError(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		u.Scheme = strings.ToLower(u.Scheme)
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return nil, fmt.Errorf("hub URL scheme %q is not http, https, ws or wss", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("hub URL has no host")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// WebSocketScheme maps an http(s) URL's scheme to ws(s) in place.
func WebSocketScheme(u *url.URL) {
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
}

// RequestHeaders copies the caller's headers and adds the bearer token.
func RequestHeaders(base http.Header, token string) http.Header {
	h := base.Clone()
	if h == nil {
		h = make(http.Header)
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// DiscardBody drains a little of a response body so its connection can
// be reused, then closes it.
func DiscardBody(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
	_ = res.Body.Close()
}

// ReservedHostError fails at once for hosts under .invalid, which RFC 6761
// reserves so that they never resolve and asks resolvers to refuse without
// a lookup. Go's resolver asks DNS anyway, which offline means waiting for
// the resolver to time out; a placeholder target should fail fast and say
// why, as a DNS failure of phase, the one that would have resolved the host.
func ReservedHostError(endpoint *url.URL, phase string) error {
	host := strings.TrimSuffix(strings.ToLower(endpoint.Hostname()), ".")
	if host != "invalid" && !strings.HasSuffix(host, ".invalid") {
		return nil
	}
	return &ConnectError{Phase: phase, Step: PhaseDNS, Err: &net.DNSError{
		Err:        "no such host (.invalid names never resolve)",
		Name:       endpoint.Hostname(),
		IsNotFound: true,
	}}
}
