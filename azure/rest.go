package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hubprobe/hubprobe/internal/sleep"
)

// ResponseObserver is told the status code of every HTTP response, under
// the name of the endpoint that answered. The SignalR client's observer
// satisfies it, so one recorder sees negotiate and REST calls alike.
type ResponseObserver interface {
	HTTPResponse(endpoint string, code int)
}

type nopResponseObserver struct{}

func (nopResponseObserver) HTTPResponse(string, int) {}

// EndpointREST is the endpoint name REST responses are reported under to
// Observer.HTTPResponse.
const EndpointREST = "rest"

// REST API versions of Azure SignalR Service.
const (
	// RESTAPIV1 uses /api/v1/hubs/{hub}/... paths.
	RESTAPIV1 = "v1"
	// RESTAPI20220601 uses /api/hubs/{hub}/.../:send?api-version=2022-06-01.
	RESTAPI20220601 = "2022-06-01"
)

// Defaults for the zero values of RESTOptions.
const (
	DefaultRESTMaxRetries   = 3
	DefaultRESTMaxRetryWait = 30 * time.Second
)

const (
	restMaxBody      = 1 << 20 // the service refuses larger bodies
	restMaxErrorBody = 512
	restMaxDrain     = 64 << 10 // read past a response to reuse the connection
	restMaxGroupName = 1024
)

// RESTOptions configures a RESTClient. Zero values take the defaults.
type RESTOptions struct {
	// APIVersion is RESTAPIV1 (the default) or RESTAPI20220601.
	APIVersion string
	// HTTPClient sends the requests; http.DefaultClient when nil.
	HTTPClient *http.Client
	// Observer is told the status code of every response, retried ones
	// included, under EndpointREST.
	Observer ResponseObserver
	// MaxRetries bounds the retries of one call after HTTP 429: 0 means
	// DefaultRESTMaxRetries, a negative value means none.
	MaxRetries int
	// MaxRetryWait is the longest wait hubprobe accepts before a retry: a
	// Retry-After beyond it ends the call with the 429. 0 means
	// DefaultRESTMaxRetryWait.
	MaxRetryWait time.Duration
	// TokenTTL is the lifetime of each request's token; 0 means
	// DefaultRESTTokenTTL.
	TokenTTL time.Duration
	// Credential signs in with Microsoft Entra ID for a connection string
	// with an AuthType (see ConnectionString.TokenCredential); unused with
	// an access key.
	Credential azcore.TokenCredential

	// Now, Sleep and Jitter let tests drive time. Now stamps tokens and
	// reads Retry-After dates (time.Now by default); Sleep waits before a
	// retry and must return ctx's error if ctx ends first; Jitter returns
	// a number in [0, 1) that scales each backoff (math/rand by default).
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func() float64
}

func (o RESTOptions) withDefaults() (RESTOptions, error) {
	switch o.APIVersion {
	case "":
		o.APIVersion = RESTAPIV1
	case RESTAPIV1, RESTAPI20220601:
	default:
		return o, fmt.Errorf("azure: REST API version %q is not %q or %q", o.APIVersion, RESTAPIV1, RESTAPI20220601)
	}
	return o.withTransportDefaults(), nil
}

// withTransportDefaults fills in everything but the API version, which
// each service checks against its own list.
func (o RESTOptions) withTransportDefaults() RESTOptions {
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Observer == nil {
		o.Observer = nopResponseObserver{}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultRESTMaxRetries
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = DefaultRESTMaxRetryWait
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultRESTTokenTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep.For
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	return o
}

// RESTError is a REST call that ended with an unexpected HTTP status.
type RESTError struct {
	Op         string // what was attempted, such as "send to group"
	StatusCode int
	Body       string        // at most the first 512 bytes of the response body
	RetryAfter time.Duration // the response's Retry-After, 0 when absent
	Attempts   int           // requests sent, retries included
	// Err is set when the call gave up waiting to retry, for example
	// because ctx ended during the backoff.
	Err error
}

func (e *RESTError) Error() string {
	msg := "azure: REST " + e.Op + ": HTTP " + strconv.Itoa(e.StatusCode)
	if e.Attempts > 1 {
		msg += " after " + strconv.Itoa(e.Attempts) + " attempts"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RESTError) Unwrap() error { return e.Err }

// RESTClient sends messages and manages groups through the REST API of
// Azure SignalR Service, for one hub. Every request carries a fresh token
// whose aud is that request's URL. It is safe for concurrent use.
type RESTClient struct {
	cs           ConnectionString
	hub          string // lower-cased
	t            restTransport
	serverBase   string // where requests go
	audienceBase string // scheme://host the tokens name
	hubPath      string // /api/v1/hubs/{hub} or /api/hubs/{hub}
}

// NewRESTClient returns a client for hub. The hub name is lower-cased, as
// the service SDKs do.
func NewRESTClient(cs ConnectionString, hub string, opts RESTOptions) (*RESTClient, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := azureCheckHub(hub); err != nil {
		return nil, err
	}
	if cs.endpoint == nil {
		return nil, errors.New("azure: REST client: connection string has no Endpoint")
	}
	auth, err := newRequestAuth(cs, o, SignalRScope, true)
	if err != nil {
		return nil, err
	}
	prefix := "/api/v1/hubs/"
	if o.APIVersion == RESTAPI20220601 {
		prefix = "/api/hubs/"
	}
	return &RESTClient{
		cs:           cs,
		hub:          strings.ToLower(hub),
		t:            restTransport{opts: o, auth: auth},
		serverBase:   cs.ServerEndpoint(),
		audienceBase: csOrigin(cs.endpoint),
		hubPath:      prefix + azureEscape(strings.ToLower(hub)),
	}, nil
}

// call builds the request for path (escaped, after the server base) and
// query (excluded=...; api-version is added here). The
// token's aud is the request URL without its query, on the Endpoint's
// scheme and host.
func (c *RESTClient) call(op, method, path string, query url.Values, body []byte, want func(int) bool) restCall {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	if c.t.opts.APIVersion == RESTAPI20220601 {
		q.Set("api-version", RESTAPI20220601)
	}
	target := c.serverBase + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	call := restCall{op: op, method: method, url: target, audience: c.audienceBase + path, body: body, want: want}
	if body != nil {
		call.contentType = "application/json"
	}
	return call
}

func restWantAccepted(code int) bool { return code == http.StatusAccepted }

// restWantSuccess accepts any 2xx: group membership calls are documented as 200
// for 2022-06-01 adds, and not at all for v1 or for removals.
func restWantSuccess(code int) bool { return code >= 200 && code < 300 }

// Broadcast sends target(args...) to every client of the hub except the
// excluded connection IDs.
func (c *RESTClient) Broadcast(ctx context.Context, target string, args []json.RawMessage, excluded ...string) error {
	q := url.Values{}
	if len(excluded) > 0 {
		q["excluded"] = excluded
	}
	return c.send(ctx, "broadcast", "", q, target, args)
}

// SendToUser sends target(args...) to every connection of user (the
// nameid of their tokens).
func (c *RESTClient) SendToUser(ctx context.Context, user, target string, args []json.RawMessage) error {
	if user == "" {
		return errors.New("azure: REST send to user: empty user ID")
	}
	return c.send(ctx, "send to user", "/users/"+azureEscape(user), nil, target, args)
}

// SendToGroup sends target(args...) to every connection in group.
func (c *RESTClient) SendToGroup(ctx context.Context, group, target string, args []json.RawMessage) error {
	if err := restCheckGroup(group); err != nil {
		return err
	}
	return c.send(ctx, "send to group", "/groups/"+azureEscape(group), nil, target, args)
}

// SendToConnection sends target(args...) to one connection.
func (c *RESTClient) SendToConnection(ctx context.Context, connID, target string, args []json.RawMessage) error {
	if connID == "" {
		return errors.New("azure: REST send to connection: empty connection ID")
	}
	return c.send(ctx, "send to connection", "/connections/"+azureEscape(connID), nil, target, args)
}

// AddConnectionToGroup puts connection connID in group.
func (c *RESTClient) AddConnectionToGroup(ctx context.Context, group, connID string) error {
	return c.membership(ctx, "add to group", http.MethodPut, group, connID)
}

// RemoveConnectionFromGroup takes connection connID out of group.
func (c *RESTClient) RemoveConnectionFromGroup(ctx context.Context, group, connID string) error {
	return c.membership(ctx, "remove from group", http.MethodDelete, group, connID)
}

func (c *RESTClient) membership(ctx context.Context, op, method, group, connID string) error {
	if err := restCheckGroup(group); err != nil {
		return err
	}
	if connID == "" {
		return fmt.Errorf("azure: REST %s: empty connection ID", op)
	}
	path := c.hubPath + "/groups/" + azureEscape(group) + "/connections/" + azureEscape(connID)
	return c.t.do(ctx, c.call(op, method, path, nil, nil, restWantSuccess))
}

// send posts {"target":...,"arguments":[...]} to the send path of scope
// ("" for the whole hub).
func (c *RESTClient) send(ctx context.Context, op, scope string, q url.Values, target string, args []json.RawMessage) error {
	if target == "" {
		return fmt.Errorf("azure: REST %s: empty target", op)
	}
	if args == nil {
		args = []json.RawMessage{}
	}
	body, err := json.Marshal(struct {
		Target    string            `json:"target"`
		Arguments []json.RawMessage `json:"arguments"`
	}{target, args})
	if err != nil {
		return fmt.Errorf("azure: REST %s: encoding the message: %w", op, err)
	}
	if len(body) > restMaxBody {
		return fmt.Errorf("azure: REST %s: message of %d bytes is over the service's %d-byte limit", op, len(body), restMaxBody)
	}
	path := c.hubPath + scope
	if c.t.opts.APIVersion == RESTAPI20220601 {
		path += "/:send"
	}
	return c.t.do(ctx, c.call(op, http.MethodPost, path, q, body, restWantAccepted))
}

func restCheckGroup(group string) error {
	if group == "" || len(group) > restMaxGroupName {
		return fmt.Errorf("azure: REST: group name must be 1 to %d characters", restMaxGroupName)
	}
	return nil
}
