package aspnetclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

const (
	// maxNegotiateRequests matches the JavaScript client's redirect limit.
	maxNegotiateRequests = 100
	maxNegotiateBody     = 1 << 20
)

var errOptions = errors.New("invalid options")

// session is what a finished negotiate gives every later request: where
// the server is, the query to send (the caller's, or the last redirect's),
// the bearer token, the connection's tokens and the server's timeouts.
type session struct {
	origin          *url.URL // scheme and host of the endpoint
	path            string   // the endpoint's path: /signalr, or the service's /aspnetclient
	query           string   // the caller's query, or the last redirect's
	accessToken     string
	connectionToken string
	connectionID    string
	data            string // connectionData
	protocolVersion string
	tryWebSockets   bool
	redirected      bool
	// serverTimeout bounds the server's silence (its KeepAliveTimeout);
	// pollTimeout bounds one long poll (ConnectionTimeout + 10 s, as the
	// JavaScript client waits); disconnectTimeout is how long after a drop
	// the server still keeps the connection, so a reconnect is worth trying.
	serverTimeout     time.Duration
	pollTimeout       time.Duration
	disconnectTimeout time.Duration
}

// requestURL is the URL of the connection's request to path (connect,
// reconnect, poll, start, send, abort, ping) over transport, with extra
// query pairs (already escaped) before the common ones, in the order the
// JavaScript client writes them.
func (s *session) requestURL(path, transport string, extra ...string) *url.URL {
	u := *s.origin
	u.Path = strings.TrimSuffix(s.path, "/") + "/" + path
	u.RawPath = ""
	var q strings.Builder
	if transport != "" {
		q.WriteString("transport=" + wireNames[transport])
	}
	for _, e := range extra {
		q.WriteString("&" + e)
	}
	q.WriteString("&clientProtocol=" + aspnet.ClientProtocol)
	if s.query != "" {
		q.WriteString("&" + s.query)
	}
	if s.connectionToken != "" {
		q.WriteString("&connectionToken=" + url.QueryEscape(s.connectionToken))
	}
	q.WriteString("&connectionData=" + url.QueryEscape(s.data))
	u.RawQuery = strings.TrimPrefix(q.String(), "&")
	return &u
}

// negotiate runs negotiate against endpoint, following Azure SignalR
// Service's redirects, and returns a *clientconn.ConnectError on failure.
// The first request is the negotiate phase on clock, every later one the
// redirect phase.
func negotiate(ctx context.Context, o *Options, endpoint *url.URL, clock *clientconn.PhaseClock) (*session, error) {
	s := newSession(endpoint, o)
	phase := clientconn.PhaseNegotiate
	for range maxNegotiateRequests {
		resp, err := getNegotiate(clock.Enter(ctx, phase), o, s)
		phase = clientconn.PhaseRedirect
		if err != nil {
			return nil, err
		}
		if !resp.IsRedirect() {
			err := s.finish(resp, o)
			return s, err
		}
		if err := s.redirect(resp); err != nil {
			return nil, err
		}
	}
	return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("more than %d negotiate redirects", maxNegotiateRequests-1))
}

func newSession(endpoint *url.URL, o *Options) *session {
	origin := &url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host, User: endpoint.User}
	return &session{origin: origin, path: endpoint.Path, query: endpoint.RawQuery,
		accessToken: o.AccessToken, data: connectionData(strings.ToLower(o.Hub))}
}

// redirect moves the session to the service, whose query replaces the
// caller's and whose token becomes the bearer token, as in the JavaScript
// client.
func (s *session) redirect(resp *aspnet.Negotiate) error {
	u, err := clientconn.ParseEndpoint(resp.RedirectURL)
	if err != nil {
		return clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("redirect: %w", err))
	}
	s.origin = &url.URL{Scheme: u.Scheme, Host: u.Host}
	s.path, s.query, s.accessToken, s.redirected = u.Path, u.RawQuery, resp.AccessToken, true
	return nil
}

// finish takes the connection's tokens and timeouts from negotiate.
func (s *session) finish(resp *aspnet.Negotiate, o *Options) error {
	s.path = resp.URL
	s.connectionToken, s.connectionID = resp.ConnectionToken, resp.ConnectionID
	s.protocolVersion, s.tryWebSockets = resp.ProtocolVersion, resp.TryWebSockets
	s.serverTimeout = o.ServerTimeout
	if resp.KeepAliveTimeout != nil && *resp.KeepAliveTimeout > 0 {
		s.serverTimeout = seconds(*resp.KeepAliveTimeout)
	}
	s.pollTimeout = o.PollTimeout
	if resp.ConnectionTimeout > 0 {
		s.pollTimeout = seconds(resp.ConnectionTimeout) + 10*time.Second
	}
	s.disconnectTimeout = seconds(resp.DisconnectTimeout)
	return nil
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// getNegotiate sends one negotiate request and decodes its answer.
func getNegotiate(ctx context.Context, o *Options, s *session) (*aspnet.Negotiate, error) {
	u := s.requestURL("negotiate", "")
	u.RawQuery += "&_=" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), http.NoBody)
	if err != nil {
		return nil, negotiateError(redact.URLError(err))
	}
	req.Header = clientconn.RequestHeaders(o.Headers, s.accessToken)
	res, err := o.HTTPClient.Do(req)
	if err != nil {
		return nil, negotiateError(redact.URLError(err))
	}
	defer res.Body.Close()
	o.Observer.HTTPResponse(clientconn.PhaseNegotiate, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return nil, statusError(clientconn.PhaseNegotiate, res)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxNegotiateBody+1))
	if err != nil {
		return nil, negotiateError(fmt.Errorf("reading negotiate response: %w", err))
	}
	if len(body) > maxNegotiateBody {
		return nil, negotiateError(fmt.Errorf("%w: negotiate response larger than %d bytes", ErrProtocol, maxNegotiateBody))
	}
	return decodeNegotiateResponse(body)
}

// decodeNegotiateResponse checks the answer as the JavaScript client
// does (aspnet.DecodeNegotiate): an ASP.NET Core server, a protocol
// version it does not speak and a server's error all fail negotiate.
func decodeNegotiateResponse(body []byte) (*aspnet.Negotiate, error) {
	r, err := aspnet.DecodeNegotiate(body)
	if err != nil {
		return nil, negotiateError(err)
	}
	return &r, nil
}

func negotiateError(err error) error {
	return clientconn.NewConnectError(clientconn.PhaseNegotiate, err)
}

// statusError turns a refused request into a *clientconn.ConnectError
// that keeps the start of the body for throttle classification.
func statusError(phase string, res *http.Response) *clientconn.ConnectError {
	return &clientconn.ConnectError{Phase: phase, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
		Err: clientconn.Refusal("unexpected HTTP status", res.StatusCode, "is the URL a classic ASP.NET SignalR endpoint, such as /signalr?")}
}
