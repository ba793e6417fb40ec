package signalrclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

func TestNegotiateURL(t *testing.T) {
	cases := map[string]string{
		"https://x.service.signalr.net/client/?hub=chat": "https://x.service.signalr.net/client/negotiate?hub=chat&negotiateVersion=1",
		"http://h/hub":                    "http://h/hub/negotiate?negotiateVersion=1",
		"http://h":                        "http://h/negotiate?negotiateVersion=1",
		"http://h/hub?negotiateVersion=0": "http://h/hub/negotiate?negotiateVersion=0",
		"ws://h:81/hub?a=1&b=2":           "http://h:81/hub/negotiate?a=1&b=2&negotiateVersion=1",
		"WSS://h/a%2Fb":                   "https://h/a%2Fb/negotiate?negotiateVersion=1",
		"https://h/hub#frag":              "https://h/hub/negotiate?negotiateVersion=1",
	}
	for in, want := range cases {
		u, err := parseEndpoint(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := negotiateURL(u).String(); got != want {
			t.Errorf("%s: negotiate URL %s, want %s", in, got, want)
		}
	}
}

func TestWebSocketURLKeepsQueryAndAddsToken(t *testing.T) {
	u, _ := parseEndpoint("https://x.service.signalr.net/client/?hub=chat")
	if got := webSocketURL(u, "a+b/c").String(); got != "wss://x.service.signalr.net/client/?hub=chat&id=a%2Bb%2Fc" {
		t.Errorf("got %s", got)
	}
	u, _ = parseEndpoint("http://h/hub")
	if got := webSocketURL(u, "").String(); got != "ws://h/hub" {
		t.Errorf("got %s", got)
	}
}

func TestParseEndpointRejects(t *testing.T) {
	for _, in := range []string{"ftp://h/hub", "h/hub", "http:///hub", "http://h/%zz"} {
		if _, err := parseEndpoint(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// negotiateServer answers negotiate with body (after checking the request)
// and counts requests.
func negotiateServer(t *testing.T, status int, body string) (*recordingServer, string) {
	t.Helper()
	rs := &recordingServer{}
	srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.record(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	return rs, srv.URL + "/hub?hub=chat"
}

type recordingServer struct {
	requests atomic.Int64
	last     atomic.Pointer[http.Request]
	bodyLen  atomic.Int64
}

func (rs *recordingServer) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rs.bodyLen.Store(int64(len(b)))
	rs.requests.Add(1)
	rs.last.Store(r)
}

func runNegotiate(t *testing.T, o Options) (*negotiation, *recordingObserver, error) {
	t.Helper()
	obs := &recordingObserver{}
	o.Observer = obs
	o, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	endpoint, err := parseEndpoint(o.URL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := negotiate(testCtx(t, 5*time.Second), &o, endpoint, nil)
	return n, obs, err
}

func TestNegotiateV1(t *testing.T) {
	rs, u := negotiateServer(t, 200, `{"negotiateVersion":1,"connectionId":"pub","connectionToken":"secret",
		"availableTransports":[{"transport":"ServerSentEvents","transferFormats":["Text"]},{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
	n, obs, err := runNegotiate(t, Options{URL: u, AccessToken: "tok", Headers: http.Header{"X-Probe": {"1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n.connectionID != "pub" || n.connectionToken != "secret" || n.accessToken != "tok" {
		t.Errorf("negotiation = %+v", n)
	}
	if _, err := chooseTransport(n, []string{TransportWebSockets}, signalr.TextFormat); err != nil {
		t.Errorf("WebSockets/Text refused: %v", err)
	}
	r := rs.last.Load()
	if r.Method != http.MethodPost || r.URL.Path != "/hub/negotiate" || r.URL.RawQuery != "hub=chat&negotiateVersion=1" || rs.bodyLen.Load() != 0 {
		t.Errorf("request %s %s?%s with %d body bytes", r.Method, r.URL.Path, r.URL.RawQuery, rs.bodyLen.Load())
	}
	if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Probe") != "1" {
		t.Errorf("headers %v", r.Header)
	}
	if got := obs.responses(); !reflect.DeepEqual(got, []string{"negotiate 200"}) {
		t.Errorf("observed %v", got)
	}
}

func TestNegotiateV0UsesConnectionIDAsToken(t *testing.T) {
	_, u := negotiateServer(t, 200, `{"connectionId":"abc","availableTransports":[{"transport":"WebSockets","transferFormats":["Text"]}]}`)
	n, _, err := runNegotiate(t, Options{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	if n.connectionToken != "abc" || n.connectionID != "abc" {
		t.Errorf("negotiation = %+v", n)
	}
}

func TestNegotiateFailures(t *testing.T) {
	cases := []struct {
		name, body   string
		status       int
		wantStatus   int
		wantInError  string
		wantProtocol bool
	}{
		{name: "error body", status: 200, body: `{"error":"Unauthorized hub"}`, wantInError: "server refused negotiate: Unauthorized hub"},
		{name: "500", status: 500, body: "Azure SignalR Service is not connected yet, please try again later.", wantStatus: 500, wantInError: "HTTP 500"},
		{name: "429", status: 429, body: "Connection count reaches limit.", wantStatus: 429},
		{name: "404", status: 404, body: "not here", wantStatus: 404, wantInError: "SignalR hub endpoint"},
		{name: "malformed JSON", status: 200, body: `{"connectionId":`, wantProtocol: true},
		{name: "no connection id", status: 200, body: `{"availableTransports":[]}`, wantProtocol: true},
		{name: "classic SignalR", status: 200, body: `{"ProtocolVersion":"1.5","ConnectionId":"x"}`, wantInError: "classic ASP.NET SignalR"},
		{name: "stateful reconnect not asked", status: 200, body: `{"connectionId":"x","useStatefulReconnect":true}`, wantProtocol: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, u := negotiateServer(t, tc.status, tc.body)
			_, obs, err := runNegotiate(t, Options{URL: u})
			var ce *clientconn.ConnectError
			if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate {
				t.Fatalf("err = %v, want a negotiate clientconn.ConnectError", err)
			}
			if ce.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", ce.StatusCode, tc.wantStatus)
			}
			if tc.wantStatus != 0 && ce.Body != tc.body {
				t.Errorf("body %q, want %q", ce.Body, tc.body)
			}
			if !strings.Contains(err.Error(), tc.wantInError) {
				t.Errorf("error %q lacks %q", err, tc.wantInError)
			}
			if errors.Is(err, signalr.ErrProtocol) != tc.wantProtocol {
				t.Errorf("errors.Is(ErrProtocol) = %v for %v", !tc.wantProtocol, err)
			}
			if got := obs.responses(); !reflect.DeepEqual(got, []string{fmt.Sprintf("negotiate %d", tc.status)}) {
				t.Errorf("observed %v", got)
			}
		})
	}
}

func TestNegotiateErrorBodyIsTruncated(t *testing.T) {
	_, u := negotiateServer(t, 503, strings.Repeat("x", 4000))
	_, _, err := runNegotiate(t, Options{URL: u})
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || len(ce.Body) != 512 {
		t.Fatalf("err = %v, body length %d", err, len(ce.Body))
	}
}

func TestNegotiateBoundsBodySize(t *testing.T) {
	huge := `{"connectionId":"x","pad":"` + strings.Repeat("a", 2<<20) + `"}`
	_, u := negotiateServer(t, 200, huge)
	_, _, err := runNegotiate(t, Options{URL: u})
	if !errors.Is(err, signalr.ErrProtocol) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

func TestNegotiateTransportChecks(t *testing.T) {
	for body, want := range map[string]string{
		`{"connectionId":"x","availableTransports":[{"transport":"LongPolling","transferFormats":["Text"]}]}`:  "does not offer the WebSockets transport",
		`{"connectionId":"x","availableTransports":[{"transport":"WebSockets","transferFormats":["Binary"]}]}`: "without the Text transfer format",
	} {
		_, u := negotiateServer(t, 200, body)
		_, err := Dial(testCtx(t, 5*time.Second), Options{URL: u})
		var ce *clientconn.ConnectError
		if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want negotiate error with %q", err, want)
		}
	}
}

// TestNegotiateRedirect follows the Azure SignalR pattern: the app server
// answers with url + accessToken; the client negotiates again there with
// the new token and opens the WebSocket there with the same token.
func TestNegotiateRedirect(t *testing.T) {
	var serviceAuth, wsAuth, wsQuery atomic.Value
	service := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/negotiate") {
			serviceAuth.Store(r.Header.Get("Authorization") + " " + r.URL.RawQuery)
			io.WriteString(w, `{"negotiateVersion":1,"connectionId":"pub","connectionToken":"tok/en",
				"availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
			return
		}
		wsAuth.Store(r.Header.Get("Authorization"))
		wsQuery.Store(r.URL.RawQuery)
		ws, err := testUpgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		if acceptHandshake(t, ws) {
			drainUntilClosed(ws)
		}
	}))
	var appAuth atomic.Value
	app := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		appAuth.Store(r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"url":%q,"accessToken":"jwt-2"}`, service.URL+"/client/?hub=chat")
	}))
	obs := &recordingObserver{}
	c, err := Dial(testCtx(t, 5*time.Second), Options{URL: app.URL + "/chat", AccessToken: "user-token", Settings: clientconn.Settings{Observer: obs}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if c.ConnectionID() != "pub" {
		t.Errorf("connection id %q", c.ConnectionID())
	}
	if got := appAuth.Load(); got != "Bearer user-token" {
		t.Errorf("app negotiate Authorization %q", got)
	}
	if got := serviceAuth.Load(); got != "Bearer jwt-2 hub=chat&negotiateVersion=1" {
		t.Errorf("service negotiate got %q", got)
	}
	if got := wsAuth.Load(); got != "Bearer jwt-2" {
		t.Errorf("websocket Authorization %q", got)
	}
	if got := wsQuery.Load(); got != "hub=chat&id=tok%2Fen" {
		t.Errorf("websocket query %q", got)
	}
	if got := obs.responses(); !reflect.DeepEqual(got, []string{"negotiate 200", "negotiate 200"}) {
		t.Errorf("observed %v", got)
	}
}

// redirectingService is a service endpoint that records the Authorization
// of its negotiate and of its WebSocket upgrade.
func redirectingService(t *testing.T) (srv *httptest.Server, negotiateAuth, wsAuth *atomic.Value) {
	negotiateAuth, wsAuth = &atomic.Value{}, &atomic.Value{}
	srv = newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/negotiate") {
			negotiateAuth.Store(r.Header.Get("Authorization"))
			io.WriteString(w, `{"negotiateVersion":1,"connectionId":"pub","connectionToken":"tok",
				"availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
			return
		}
		wsAuth.Store(r.Header.Get("Authorization"))
		ws, err := testUpgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		if acceptHandshake(t, ws) {
			drainUntilClosed(ws)
		}
	}))
	return srv, negotiateAuth, wsAuth
}

// A redirect that names a url but no accessToken leaves the token as it
// was, as the JavaScript client does: the user's token goes on to the new
// endpoint, and a token an earlier redirect gave goes on after a later one.
func TestNegotiateRedirectWithoutTokenKeepsTheToken(t *testing.T) {
	for _, tt := range []struct {
		name      string
		redirects []string // accessToken of each redirect in turn; "" for none
		want      string
	}{
		{"user token", []string{""}, "Bearer user-token"},
		{"token of an earlier redirect", []string{"jwt-2", ""}, "Bearer jwt-2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			service, negotiateAuth, wsAuth := redirectingService(t)
			var hops atomic.Int64
			app := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hop := int(hops.Add(1)) - 1
				next := service.URL + "/client/?hub=chat"
				if hop+1 < len(tt.redirects) {
					next = "http://" + r.Host + "/again"
				}
				body := map[string]string{"url": next}
				if tok := tt.redirects[hop]; tok != "" {
					body["accessToken"] = tok
				}
				_ = json.NewEncoder(w).Encode(body)
			}))
			c, err := Dial(testCtx(t, 5*time.Second), Options{URL: app.URL + "/chat", AccessToken: "user-token"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			if got := hops.Load(); got != int64(len(tt.redirects)) {
				t.Errorf("%d app negotiates, want %d", got, len(tt.redirects))
			}
			if got := negotiateAuth.Load(); got != tt.want {
				t.Errorf("service negotiate Authorization %q, want %q", got, tt.want)
			}
			if got := wsAuth.Load(); got != tt.want {
				t.Errorf("websocket Authorization %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNegotiateRedirectLimit(t *testing.T) {
	var n atomic.Int64
	var self string
	srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprintf(w, `{"url":%q}`, self)
	}))
	self = srv.URL + "/again"
	_, _, err := runNegotiate(t, Options{URL: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("err = %v", err)
	}
	if n.Load() != maxNegotiateRequests {
		t.Errorf("%d negotiate requests, want %d", n.Load(), maxNegotiateRequests)
	}
}

func TestNegotiateHonoursContextDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Dial(ctx, Options{URL: srv.URL + "/hub"})
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout clientconn.ConnectError", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Dial returned after %s", elapsed)
	}
}

func TestDialErrorsDoNotLeakSecrets(t *testing.T) {
	// The WebSocket endpoint refuses the upgrade; the error must not echo
	// the access token or the connection token carried in the URL.
	srv := newLocalServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/negotiate") {
			io.WriteString(w, `{"connectionId":"pub","connectionToken":"conn-secret","availableTransports":[{"transport":"WebSockets","transferFormats":["Text"]}]}`)
			return
		}
		http.Error(w, "gone", http.StatusNotFound)
	}))
	_, err := Dial(testCtx(t, 5*time.Second), Options{URL: srv.URL + "/hub?access_token=query-secret", AccessToken: "header-secret"})
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTransport || ce.StatusCode != 404 {
		t.Fatalf("err = %v, want transport 404", err)
	}
	for _, secret := range []string{"conn-secret", "query-secret", "header-secret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q reveals %s", err, secret)
		}
	}
	// A refused connection: the error comes from the HTTP client, which
	// would name the URL.
	dead := newLocalServer(t, http.NotFoundHandler())
	deadURL := dead.URL + "/hub?access_token=query-secret"
	dead.Close()
	_, err = Dial(testCtx(t, 5*time.Second), Options{URL: deadURL})
	if err == nil || strings.Contains(err.Error(), "query-secret") {
		t.Errorf("err = %v", err)
	}
}

func TestUnsupportedTransport(t *testing.T) {
	_, err := Dial(context.Background(), Options{URL: "http://127.0.0.1:1/hub", Transport: "carrier-pigeon"})
	var ce *clientconn.ConnectError
	if err == nil || errors.As(err, &ce) || !strings.Contains(err.Error(), `unknown transport "carrier-pigeon"`) {
		t.Errorf("err = %v", err)
	}
}

func TestSkipNegotiationDialsURLDirectly(t *testing.T) {
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if acceptHandshake(t, ws) {
			drainUntilClosed(ws)
		}
	})
	c, err := Dial(testCtx(t, 5*time.Second), Options{URL: strings.Replace(h.url(), "ws://", "http://", 1) + "?hub=x", SkipNegotiation: true, AccessToken: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	r := <-h.requests
	if r.URL.Path != "/hub" || r.URL.RawQuery != "hub=x" || r.Header.Get("Authorization") != "Bearer t" {
		t.Errorf("upgrade request %s?%s auth %q", r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"))
	}
	if c.ConnectionID() != "" {
		t.Errorf("connection id %q without negotiate", c.ConnectionID())
	}
}
