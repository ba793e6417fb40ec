package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/throttle"
)

// restRequest is what the REST emulator saw of one request.
type restRequest struct {
	method, path, query, body, contentType, token string
	at                                            time.Time
	tokenErr                                      error // golang-jwt's verdict with aud = this request's URL
	claims                                        TokenClaims
}

// restEmulator plays the service's REST API: it verifies each bearer token
// against the request's own URL, records the request, and answers with the
// next scripted response (the last one repeats).
type restEmulator struct {
	t        *testing.T
	key      []byte
	endpoint string
	now      func() time.Time // the service's clock, for token checks

	mu        sync.Mutex
	requests  []restRequest
	responses []restResponse
	// fullURLAudience makes the emulator expect aud = the whole request
	// URL, query included, as Web PubSub's SDK signs it; SignalR's aud
	// leaves the query out.
	fullURLAudience bool
}

type restResponse struct {
	status int
	header map[string]string
	body   string
}

func newRESTEmulator(t *testing.T, responses ...restResponse) *restEmulator {
	e := &restEmulator{t: t, key: []byte(azureTestKey), now: time.Now, responses: responses}
	e.endpoint = localtest.Server(t, http.HandlerFunc(e.serve)).URL
	return e
}

func (e *restEmulator) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	aud := e.endpoint + strings.TrimRight(r.URL.EscapedPath(), "/")
	req := restRequest{
		method: r.Method, path: r.URL.EscapedPath(), query: r.URL.RawQuery, body: string(body),
		contentType: r.Header.Get("Content-Type"), token: token, at: time.Now(),
	}
	e.mu.Lock()
	now := e.now()
	if e.fullURLAudience {
		aud = e.endpoint + r.URL.RequestURI()
	}
	e.mu.Unlock()
	_, req.tokenErr = jwtParse(e.t, e.key, token, aud, now)
	claims, verifyErr := VerifyToken(e.key, token, aud, now)
	req.claims = claims
	e.mu.Lock()
	e.requests = append(e.requests, req)
	resp := restResponse{status: http.StatusUnauthorized}
	if verifyErr == nil && len(e.responses) > 0 {
		resp = e.responses[0]
		if len(e.responses) > 1 {
			e.responses = e.responses[1:]
		}
	}
	e.mu.Unlock()
	for k, v := range resp.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.status)
	io.WriteString(w, resp.body)
}

func (e *restEmulator) seen() []restRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]restRequest(nil), e.requests...)
}

// client returns a RESTClient for the emulator; when opts carries a fake
// clock, the emulator checks tokens on that clock too.
func (e *restEmulator) client(t *testing.T, opts RESTOptions) *RESTClient {
	t.Helper()
	if opts.Now != nil {
		e.mu.Lock()
		e.now = opts.Now
		e.mu.Unlock()
	}
	cs := mustParseCS(t, "Endpoint="+e.endpoint+";AccessKey="+azureTestKey+";Version=1.0;")
	c, err := NewRESTClient(cs, "Chat", opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fakeRESTTime records the waits a RESTClient asks for instead of sleeping.
type fakeRESTTime struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeRESTTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeRESTTime) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return ctx.Err()
}

func (f *fakeRESTTime) waits() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

func (f *fakeRESTTime) options(jitter float64) RESTOptions {
	return RESTOptions{Now: f.Now, Sleep: f.Sleep, Jitter: func() float64 { return jitter }}
}

func newFakeRESTTime() *fakeRESTTime { return &fakeRESTTime{now: time.Now().Truncate(time.Second)} }

var restArgs = []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"two"`), json.RawMessage(`{"t":3}`)}

const restBody = `{"target":"recv","arguments":[1,"two",{"t":3}]}`

// restWant is what one REST call must send.
type restWant struct{ method, path, query, body string }

// restPathCases are the REST calls with what each must send under v1 and
// 2022-06-01.
var restPathCases = []struct {
	name string
	call func(context.Context, *RESTClient) error
	v1   restWant
	v2   restWant
}{
	{"broadcast", func(ctx context.Context, c *RESTClient) error { return c.Broadcast(ctx, "recv", restArgs, "c1", "c/2") },
		restWant{"POST", "/api/v1/hubs/chat", "excluded=c1&excluded=c%2F2", restBody},
		restWant{"POST", "/api/hubs/chat/:send", "api-version=2022-06-01&excluded=c1&excluded=c%2F2", restBody}},
	{"broadcast to all", func(ctx context.Context, c *RESTClient) error { return c.Broadcast(ctx, "recv", nil) },
		restWant{"POST", "/api/v1/hubs/chat", "", `{"target":"recv","arguments":[]}`},
		restWant{"POST", "/api/hubs/chat/:send", "api-version=2022-06-01", `{"target":"recv","arguments":[]}`}},
	{"user", func(ctx context.Context, c *RESTClient) error {
		return c.SendToUser(ctx, "user/1 a@b", "recv", restArgs)
	},
		restWant{"POST", "/api/v1/hubs/chat/users/user%2F1%20a%40b", "", restBody},
		restWant{"POST", "/api/hubs/chat/users/user%2F1%20a%40b/:send", "api-version=2022-06-01", restBody}},
	{"group", func(ctx context.Context, c *RESTClient) error { return c.SendToGroup(ctx, "g 1", "recv", restArgs) },
		restWant{"POST", "/api/v1/hubs/chat/groups/g%201", "", restBody},
		restWant{"POST", "/api/hubs/chat/groups/g%201/:send", "api-version=2022-06-01", restBody}},
	{"connection", func(ctx context.Context, c *RESTClient) error {
		return c.SendToConnection(ctx, "conn+1", "recv", restArgs)
	},
		restWant{"POST", "/api/v1/hubs/chat/connections/conn%2B1", "", restBody},
		restWant{"POST", "/api/hubs/chat/connections/conn%2B1/:send", "api-version=2022-06-01", restBody}},
	{"add", func(ctx context.Context, c *RESTClient) error { return c.AddConnectionToGroup(ctx, "g1", "conn+1") },
		restWant{"PUT", "/api/v1/hubs/chat/groups/g1/connections/conn%2B1", "", ""},
		restWant{"PUT", "/api/hubs/chat/groups/g1/connections/conn%2B1", "api-version=2022-06-01", ""}},
	{"remove", func(ctx context.Context, c *RESTClient) error {
		return c.RemoveConnectionFromGroup(ctx, "g1", "conn+1")
	},
		restWant{"DELETE", "/api/v1/hubs/chat/groups/g1/connections/conn%2B1", "", ""},
		restWant{"DELETE", "/api/hubs/chat/groups/g1/connections/conn%2B1", "api-version=2022-06-01", ""}},
}

func TestRESTPathsMethodsAndTokens(t *testing.T) {
	for _, version := range []string{RESTAPIV1, RESTAPI20220601} {
		for _, c := range restPathCases {
			w := c.v1
			if version == RESTAPI20220601 {
				w = c.v2
			}
			checkRESTCall(t, version, c.name, c.call, w)
		}
	}
}

// checkRESTCall makes one call against an emulator and checks the request
// it sent: method, path, query, body, token and content type.
func checkRESTCall(t *testing.T, version, name string, call func(context.Context, *RESTClient) error, w restWant) {
	t.Helper()
	status := http.StatusAccepted
	if w.method != http.MethodPost {
		status = http.StatusOK
	}
	emu := newRESTEmulator(t, restResponse{status: status})
	obs := &recordingObserver{}
	client := emu.client(t, RESTOptions{APIVersion: version, Observer: obs})
	if err := call(localtest.Ctx(t, 5*time.Second), client); err != nil {
		t.Errorf("%s %s: %v", version, name, err)
		return
	}
	reqs := emu.seen()
	if len(reqs) != 1 {
		t.Fatalf("%s %s: %d requests", version, name, len(reqs))
	}
	r := reqs[0]
	if got := (restWant{r.method, r.path, r.query, r.body}); got != w {
		t.Errorf("%s %s:\n got %+v\nwant %+v", version, name, got, w)
	}
	if r.tokenErr != nil {
		t.Errorf("%s %s: golang-jwt rejects the token for aud %s%s: %v", version, name, emu.endpoint, r.path, r.tokenErr)
	}
	if wantCT := map[bool]string{true: "application/json", false: ""}[w.body != ""]; r.contentType != wantCT {
		t.Errorf("%s %s: Content-Type %q", version, name, r.contentType)
	}
	if got := obs.responses(); len(got) != 1 || got[0] != fmt.Sprintf("rest %d", status) {
		t.Errorf("%s %s: observer saw %v", version, name, got)
	}
}

func TestRESTMintsAFreshTokenPerRequest(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: http.StatusAccepted})
	clock := newFakeRESTTime()
	client := emu.client(t, clock.options(1))
	ctx := localtest.Ctx(t, 5*time.Second)
	for i := range 2 {
		if err := client.SendToGroup(ctx, "g", "recv", restArgs); err != nil {
			t.Fatal(err)
		}
		if err := clock.Sleep(ctx, time.Duration(i+1)*time.Minute); err != nil { // the clock moves between calls
			t.Fatal(err)
		}
	}
	reqs := emu.seen()
	if len(reqs) != 2 || reqs[0].token == reqs[1].token {
		t.Fatalf("%d requests; tokens equal: %v", len(reqs), len(reqs) == 2 && reqs[0].token == reqs[1].token)
	}
	if d := reqs[1].claims.IssuedAt.Sub(reqs[0].claims.IssuedAt); d != time.Minute {
		t.Errorf("second token issued %s after the first, want 1m (the fake clock)", d)
	}
	if ttl := reqs[0].claims.ExpiresAt.Sub(reqs[0].claims.IssuedAt); ttl != DefaultRESTTokenTTL {
		t.Errorf("token lifetime %s", ttl)
	}
}

func TestRESTUnexpectedStatusIsRESTErrorWithoutRetry(t *testing.T) {
	long := strings.Repeat("x", 2000)
	cases := []struct {
		resp restResponse
		call func(context.Context, *RESTClient) error
	}{
		{restResponse{status: 500, body: `{"code":"InternalError"}`}, func(ctx context.Context, c *RESTClient) error { return c.Broadcast(ctx, "recv", restArgs) }},
		{restResponse{status: 503, header: map[string]string{"Retry-After": "1"}}, func(ctx context.Context, c *RESTClient) error { return c.Broadcast(ctx, "recv", restArgs) }},
		{restResponse{status: 400, body: long}, func(ctx context.Context, c *RESTClient) error { return c.SendToUser(ctx, "u", "recv", restArgs) }},
		{restResponse{status: 200}, func(ctx context.Context, c *RESTClient) error { return c.SendToConnection(ctx, "c", "recv", restArgs) }},
		{restResponse{status: 404, body: "not found"}, func(ctx context.Context, c *RESTClient) error { return c.AddConnectionToGroup(ctx, "g", "c") }},
	}
	for _, c := range cases {
		emu := newRESTEmulator(t, c.resp)
		clock := newFakeRESTTime()
		err := c.call(localtest.Ctx(t, 5*time.Second), emu.client(t, clock.options(1)))
		var re *RESTError
		if !errors.As(err, &re) || re.StatusCode != c.resp.status || re.Attempts != 1 {
			t.Errorf("HTTP %d: err %v, want a RESTError after 1 attempt", c.resp.status, err)
			continue
		}
		if want := c.resp.body[:min(len(c.resp.body), 512)]; re.Body != want {
			t.Errorf("HTTP %d: Body %d bytes, want %d", c.resp.status, len(re.Body), len(want))
		}
		if n := len(emu.seen()); n != 1 || len(clock.waits()) != 0 {
			t.Errorf("HTTP %d: %d requests, waits %v: want no retry", c.resp.status, n, clock.waits())
		}
		if _, throttled := ClassifyRESTThrottle(err); throttled {
			t.Errorf("HTTP %d classified as throttling", c.resp.status)
		}
	}
}

func TestREST429HonoursRetryAfterSeconds(t *testing.T) {
	throttled := restResponse{status: 429, header: map[string]string{"Retry-After": "2"}}
	emu := newRESTEmulator(t, throttled, throttled, restResponse{status: 202})
	clock := newFakeRESTTime()
	opts := clock.options(1)
	obs := &recordingObserver{}
	opts.Observer = obs
	if err := emu.client(t, opts).SendToGroup(localtest.Ctx(t, 5*time.Second), "g", "recv", restArgs); err != nil {
		t.Fatal(err)
	}
	if got := clock.waits(); fmt.Sprint(got) != "[2s 2s]" {
		t.Errorf("waits %v, want [2s 2s]: never sooner than Retry-After", got)
	}
	if got := strings.Join(obs.responses(), ","); got != "rest 429,rest 429,rest 202" {
		t.Errorf("observer saw %s", got)
	}
	reqs := emu.seen()
	if len(reqs) != 3 || reqs[0].token == reqs[2].token {
		t.Errorf("%d requests; each retry needs its own token", len(reqs))
	}
	for _, r := range reqs {
		if r.tokenErr != nil {
			t.Errorf("retry token: %v", r.tokenErr)
		}
	}
}

func TestREST429HonoursRetryAfterDate(t *testing.T) {
	clock := newFakeRESTTime()
	date := clock.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	past := clock.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	emu := newRESTEmulator(t,
		restResponse{status: 429, header: map[string]string{"Retry-After": date}},
		restResponse{status: 429, header: map[string]string{"Retry-After": past}},
		restResponse{status: 202})
	if err := emu.client(t, clock.options(1)).Broadcast(localtest.Ctx(t, 5*time.Second), "recv", restArgs); err != nil {
		t.Fatal(err)
	}
	// The date is 3 s ahead; a date already past falls back to the backoff
	// (second retry: 1.0 * 200 ms).
	if got := clock.waits(); fmt.Sprint(got) != "[3s 200ms]" {
		t.Errorf("waits %v, want [3s 200ms]", got)
	}
}

func TestREST429WithoutRetryAfterBacksOffExponentially(t *testing.T) {
	for _, c := range []struct {
		jitter float64
		want   string
	}{{1, "[100ms 200ms 400ms]"}, {0.5, "[50ms 100ms 200ms]"}, {0, "[10ms 10ms 10ms]"}} {
		emu := newRESTEmulator(t, restResponse{status: 429, body: "Too many requests"})
		clock := newFakeRESTTime()
		err := emu.client(t, clock.options(c.jitter)).Broadcast(localtest.Ctx(t, 5*time.Second), "recv", restArgs)
		if got := fmt.Sprint(clock.waits()); got != c.want {
			t.Errorf("jitter %v: waits %s, want %s", c.jitter, got, c.want)
		}
		var re *RESTError
		if !errors.As(err, &re) || re.StatusCode != 429 || re.Attempts != DefaultRESTMaxRetries+1 || re.RetryAfter != 0 {
			t.Errorf("jitter %v: %v, want a 429 RESTError after %d attempts", c.jitter, err, DefaultRESTMaxRetries+1)
		}
		if n := len(emu.seen()); n != DefaultRESTMaxRetries+1 {
			t.Errorf("jitter %v: %d requests", c.jitter, n)
		}
		if reason, ok := ClassifyRESTThrottle(err); reason != throttle.HTTP429 || !ok {
			t.Errorf("classified %q %v", reason, ok)
		}
	}
}

func TestRESTBackoffCeilingGrowsToCap(t *testing.T) {
	var got []time.Duration
	for retry := 1; retry <= 8; retry++ {
		got = append(got, restBackoff(retry, 1))
	}
	if fmt.Sprint(got) != "[100ms 200ms 400ms 800ms 1.6s 3.2s 5s 5s]" {
		t.Errorf("ceilings %v", got)
	}
	if d := restBackoff(1000, 0.999); d > restBackoffCap || d < restBackoffCap*99/100 {
		t.Errorf("retry 1000: %s", d)
	}
	if d := restBackoff(2, -3); d != restMinWait {
		t.Errorf("negative jitter: %s", d)
	}
}

func TestRESTRetryLimits(t *testing.T) {
	throttled := restResponse{status: 429, header: map[string]string{"Retry-After": "1"}}
	cases := []struct {
		name     string
		opts     func(*RESTOptions)
		resp     restResponse
		requests int
	}{
		{"no retries", func(o *RESTOptions) { o.MaxRetries = -1 }, throttled, 1},
		{"one retry", func(o *RESTOptions) { o.MaxRetries = 1 }, throttled, 2},
		{"Retry-After beyond MaxRetryWait", func(o *RESTOptions) { o.MaxRetryWait = 500 * time.Millisecond }, throttled, 1},
		{"Retry-After far away", nil, restResponse{status: 429, header: map[string]string{"Retry-After": "99999999999999999999"}}, 1},
	}
	for _, c := range cases {
		emu := newRESTEmulator(t, c.resp)
		clock := newFakeRESTTime()
		opts := clock.options(1)
		if c.opts != nil {
			c.opts(&opts)
		}
		err := emu.client(t, opts).Broadcast(localtest.Ctx(t, 5*time.Second), "recv", restArgs)
		var re *RESTError
		if !errors.As(err, &re) || re.Attempts != c.requests || len(emu.seen()) != c.requests {
			t.Errorf("%s: %v after %d requests, want %d", c.name, err, len(emu.seen()), c.requests)
		}
	}
}

func TestREST429RetryAfterRealTime(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 429, header: map[string]string{"Retry-After": "2"}}, restResponse{status: 202})
	client := emu.client(t, RESTOptions{})
	start := time.Now()
	if err := client.Broadcast(localtest.Ctx(t, 6*time.Second), "recv", restArgs); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	reqs := emu.seen()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if gap := reqs[1].at.Sub(reqs[0].at); gap < 2*time.Second {
		t.Errorf("retried %s after the 429, before Retry-After: 2", gap)
	}
	t.Logf("Retry-After: 2 retried after %s (call took %s)", reqs[1].at.Sub(reqs[0].at), elapsed)
}

func TestRESTGivesUpAtOnceWhenWaitOutlastsDeadline(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 429, header: map[string]string{"Retry-After": "10"}})
	start := time.Now()
	err := emu.client(t, RESTOptions{}).Broadcast(localtest.Ctx(t, 3*time.Second), "recv", restArgs)
	var re *RESTError
	if !errors.As(err, &re) || re.RetryAfter != 10*time.Second || re.Attempts != 1 {
		t.Errorf("err %v, want the 429 with RetryAfter 10s", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s: slept although the deadline came first", d)
	}
}

func TestRESTContextCancelDuringBackoff(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 429, header: map[string]string{"Retry-After": "10"}})
	client := emu.client(t, RESTOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- client.SendToGroup(ctx, "g", "recv", restArgs) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("SendToGroup still waiting 5 s after cancel")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned %s after start; cancel came at 100ms", d)
	}
	var re *RESTError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &re) || re.StatusCode != 429 {
		t.Errorf("err %v, want context.Canceled inside the 429 RESTError", err)
	}
	if reason, ok := ClassifyRESTThrottle(err); reason != throttle.HTTP429 || !ok {
		t.Errorf("classified %q %v", reason, ok)
	}
	if n := len(emu.seen()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestRESTWrongKeyIs401AndSecretsStayOut(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 202})
	const wrongKey = "wrongKEY0123456789abcdefghij="
	cs := mustParseCS(t, "Endpoint="+emu.endpoint+";AccessKey="+wrongKey)
	client, err := NewRESTClient(cs, "chat", RESTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	err = client.Broadcast(localtest.Ctx(t, 5*time.Second), "recv", restArgs)
	var re *RESTError
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized || re.Attempts != 1 {
		t.Errorf("wrong key: %v, want a 401 RESTError", err)
	}
	errs = append(errs, err)

	// A transport failure: nothing listens on the port any more.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadEndpoint := "http://" + l.Addr().String()
	l.Close()
	deadClient, err := NewRESTClient(mustParseCS(t, "Endpoint="+deadEndpoint+";AccessKey="+azureTestKey), "chat", RESTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = deadClient.SendToUser(localtest.Ctx(t, 5*time.Second), "u", "recv", restArgs)
	if err == nil || errors.As(err, &re) {
		t.Errorf("send to a closed port: %v, want a transport error", err)
	}
	errs = append(errs, err)

	tokens := []string{}
	for _, r := range emu.seen() {
		tokens = append(tokens, r.token)
	}
	for _, err := range errs {
		msg := fmt.Sprintf("%v %+v", err, err)
		for _, secret := range append(tokens, wrongKey, azureTestKey, "Bearer") {
			if secret != "" && strings.Contains(msg, secret) {
				t.Errorf("error %q holds a secret", msg)
			}
		}
	}
}

func TestRESTValidatesBeforeSending(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 202})
	client := emu.client(t, RESTOptions{})
	ctx := localtest.Ctx(t, 5*time.Second)
	huge := []json.RawMessage{json.RawMessage(`"` + strings.Repeat("x", restMaxBody) + `"`)}
	for name, err := range map[string]error{
		"empty group":    client.SendToGroup(ctx, "", "recv", restArgs),
		"long group":     client.AddConnectionToGroup(ctx, strings.Repeat("g", restMaxGroupName+1), "c"),
		"empty user":     client.SendToUser(ctx, "", "recv", restArgs),
		"empty conn":     client.SendToConnection(ctx, "", "recv", restArgs),
		"empty conn add": client.RemoveConnectionFromGroup(ctx, "g", ""),
		"empty target":   client.Broadcast(ctx, "", restArgs),
		"over 1 MB":      client.Broadcast(ctx, "recv", huge),
		"bad JSON arg":   client.Broadcast(ctx, "recv", []json.RawMessage{json.RawMessage(`{`)}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if n := len(emu.seen()); n != 0 {
		t.Errorf("%d requests sent for invalid calls", n)
	}
	cs := mustParseCS(t, "Endpoint="+emu.endpoint+";AccessKey=k")
	for _, bad := range []struct {
		hub  string
		opts RESTOptions
	}{{"1chat", RESTOptions{}}, {"chat.x", RESTOptions{}}, {"chat", RESTOptions{APIVersion: "2024-01-01"}}} {
		if _, err := NewRESTClient(cs, bad.hub, bad.opts); err == nil {
			t.Errorf("NewRESTClient(%q, %+v) accepted", bad.hub, bad.opts.APIVersion)
		}
	}
}

func TestRESTRequestsGoToServerEndpointWithEndpointAudience(t *testing.T) {
	emu := newRESTEmulator(t, restResponse{status: 202})
	// Requests go to ServerEndpoint (the emulator); tokens name Endpoint.
	cs := mustParseCS(t, "Endpoint=https://x.service.signalr.net;AccessKey="+azureTestKey+";ServerEndpoint="+emu.endpoint)
	client, err := NewRESTClient(cs, "chat", RESTOptions{APIVersion: RESTAPI20220601})
	if err != nil {
		t.Fatal(err)
	}
	err = client.Broadcast(localtest.Ctx(t, 5*time.Second), "recv", restArgs)
	var re *RESTError
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Fatalf("err %v: the emulator expects its own URL as aud, so it must refuse", err)
	}
	reqs := emu.seen()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if _, err := VerifyToken(cs.AccessKey(), reqs[0].token, "https://x.service.signalr.net/api/hubs/chat/:send", time.Now()); err != nil {
		t.Errorf("token aud is not Endpoint + path: %v", err)
	}
}

// recordingObserver keeps the "endpoint code" of every response reported.
type recordingObserver struct {
	mu    sync.Mutex
	codes []string
}

func (o *recordingObserver) HTTPResponse(endpoint string, code int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.codes = append(o.codes, endpoint+" "+strconv.Itoa(code))
}

func (o *recordingObserver) responses() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.codes...)
}
