package signalrclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

const (
	// maxNegotiateRequests matches the JS client's redirect limit.
	maxNegotiateRequests = 100
	maxNegotiateBody     = 1 << 20
)

// negotiation is what the transport needs from a finished negotiate.
type negotiation struct {
	endpoint        *url.URL // the last redirect target, or the original URL
	connectionID    string
	connectionToken string
	accessToken     string
	transports      []signalr.AvailableTransport
}

// parseEndpoint accepts an http(s) or ws(s) URL and returns its http(s) form.
var parseEndpoint = clientconn.ParseEndpoint

// negotiateURL builds {endpoint}/negotiate?{query}&negotiateVersion=1 the
// way the JS client does: the path gets a '/' and "negotiate", the original
// query is kept.
func negotiateURL(endpoint *url.URL) *url.URL {
	u := *endpoint
	p := u.EscapedPath()
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	p += "negotiate"
	u.RawPath = p
	u.Path, _ = url.PathUnescape(p) // p came from EscapedPath, so it unescapes
	if !u.Query().Has("negotiateVersion") {
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += "negotiateVersion=1"
	}
	return &u
}

// webSocketURL maps endpoint to ws(s) and adds the connection token as id=.
func webSocketURL(endpoint *url.URL, connectionToken string) *url.URL {
	u := withConnectionToken(endpoint, connectionToken)
	clientconn.WebSocketScheme(u)
	return u
}

// negotiate runs negotiate against endpoint, following redirects, and
// returns a *clientconn.ConnectError on failure. The first request is the
// negotiate phase on clock, every later one the redirect phase.
func negotiate(ctx context.Context, o *Options, endpoint *url.URL, clock *clientconn.PhaseClock) (*negotiation, error) {
	token := o.AccessToken
	phase := clientconn.PhaseNegotiate
	for range maxNegotiateRequests {
		resp, err := postNegotiate(clock.Enter(ctx, phase), o, endpoint, token)
		phase = clientconn.PhaseRedirect
		if err != nil {
			return nil, err
		}
		if resp.URL == "" {
			return finishNegotiation(endpoint, token, resp)
		}
		if endpoint, err = parseEndpoint(resp.URL); err != nil {
			return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("redirect: %w", err))
		}
		if resp.AccessToken != "" {
			token = resp.AccessToken
		}
	}
	return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("more than %d negotiate redirects", maxNegotiateRequests-1))
}

func finishNegotiation(endpoint *url.URL, token string, resp *signalr.NegotiateResponse) (*negotiation, error) {
	n := &negotiation{
		endpoint:        endpoint,
		connectionID:    resp.ConnectionID,
		connectionToken: resp.ConnectionToken,
		accessToken:     token,
		transports:      resp.AvailableTransports,
	}
	// Version 0 servers have no token: the connection id is the id= value.
	if n.connectionToken == "" {
		n.connectionToken = n.connectionID
	}
	if n.connectionToken == "" {
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("%w: negotiate response has no connectionId", signalr.ErrProtocol))
	}
	return n, nil
}

// postNegotiate sends one negotiate request and decodes its answer.
func postNegotiate(ctx context.Context, o *Options, endpoint *url.URL, token string) (*signalr.NegotiateResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, negotiateURL(endpoint).String(), http.NoBody)
	if err != nil {
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, redact.URLError(err))
	}
	req.Header = requestHeaders(o.Headers, token)
	res, err := o.HTTPClient.Do(req)
	if err != nil {
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, redact.URLError(err))
	}
	defer res.Body.Close()
	o.Observer.HTTPResponse(clientconn.PhaseNegotiate, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return nil, statusError(clientconn.PhaseNegotiate, res)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxNegotiateBody+1))
	if err != nil {
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("reading negotiate response: %w", err))
	}
	if len(body) > maxNegotiateBody {
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("%w: negotiate response larger than %d bytes", signalr.ErrProtocol, maxNegotiateBody))
	}
	return decodeNegotiateResponse(body)
}

func decodeNegotiateResponse(body []byte) (*signalr.NegotiateResponse, error) {
	var r signalr.NegotiateResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("%w: invalid negotiate response: %v", signalr.ErrProtocol, err))
	}
	switch {
	case r.Error != "":
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("server refused negotiate: %s", r.Error))
	case r.ProtocolVersion != "":
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, errors.New("server is classic ASP.NET SignalR, not ASP.NET Core SignalR"))
	case r.UseStatefulReconnect:
		return nil, clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("%w: server enabled stateful reconnect, which was not requested", signalr.ErrProtocol))
	}
	return &r, nil
}

// statusError turns a non-success HTTP response into a *clientconn.ConnectError that
// keeps the start of the body for throttle classification.
func statusError(phase string, res *http.Response) *clientconn.ConnectError {
	return &clientconn.ConnectError{Phase: phase, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
		Err: clientconn.Refusal("unexpected HTTP status", res.StatusCode, "is the URL a SignalR hub endpoint?")}
}

// requestHeaders copies the caller's headers and adds the bearer token.
var requestHeaders = clientconn.RequestHeaders
