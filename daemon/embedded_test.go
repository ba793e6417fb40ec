package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"slices"
)

// loadSinkLog records which targets' load is reported.
type loadSinkLog struct {
	mu      sync.Mutex
	sources map[string]func() float64
	removed []string
}

func (l *loadSinkLog) SetServerLoadSource(target string, load func() float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sources[target] = load
}

func (l *loadSinkLog) RemoveServerLoadSource(target string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sources, target)
	l.removed = append(l.removed, target)
}

func (l *loadSinkLog) targets() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for _, t := range []string{"plain", "keyed", "remote"} {
		if l.sources[t] != nil {
			out = append(out, t)
		}
	}
	return out
}

// embeddedConfig has two embedded targets, one keyed, and a remote one.
func embeddedConfig(delay time.Duration, maxMessageSize int64) *config.Config {
	return &config.Config{Targets: []config.Target{
		{Name: "plain", Embedded: true, EmbeddedHub: config.EmbeddedHub{DeliveryDelay: delay}},
		{Name: "keyed", Embedded: true, EmbeddedHub: config.EmbeddedHub{AccessKey: "embedded-key", MaxMessageSize: maxMessageSize}},
		{Name: "remote", URL: "http://127.0.0.1:1/signalrbench"},
	}}
}

// syncedEmbedded runs the hubs of embeddedConfig until the test ends.
func syncedEmbedded(t *testing.T) (*embeddedHubs, *loadSinkLog) {
	t.Helper()
	sink := &loadSinkLog{sources: map[string]func() float64{}}
	e := newEmbeddedHubs(context.Background(), zerolog.Nop(), sink)
	t.Cleanup(e.Close)
	if err := e.Sync(embeddedConfig(0, 0)); err != nil {
		t.Fatal(err)
	}
	return e, sink
}

func mustURL(t *testing.T, e *embeddedHubs, target string) string {
	t.Helper()
	url, ok := e.URL(target)
	if !ok {
		t.Fatalf("no embedded hub runs for %q", target)
	}
	return url
}

// negotiates reports whether a hub answers negotiate at url.
func negotiates(url string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Post(url+"/negotiate?negotiateVersion=1", "text/plain", nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// echoTakes is how long the hub at url takes to deliver an Echo back to
// its caller.
func echoTakes(t *testing.T, url string) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	delivered := make(chan struct{}, 1)
	c, err := signalrclient.Dial(ctx, signalrclient.Options{URL: url, Handlers: map[string]signalrclient.Handler{
		"RecordLatency": func([]json.RawMessage) { delivered <- struct{}{} },
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	began := time.Now()
	if err := c.Send(ctx, "Echo", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-delivered:
		return time.Since(began)
	case <-ctx.Done():
		t.Fatal("the echo never came back")
		return 0
	}
}

// connectionsByTarget is what each embedded hub adds to /metrics, labelled
// with its target.
const connectionsByTarget = `# HELP hubprobe_hub_connections Client connections of the embedded hub that completed the handshake and are open.
# TYPE hubprobe_hub_connections gauge
hubprobe_hub_connections{target="keyed"} 0
hubprobe_hub_connections{target="plain"} 0
`

func TestEmbeddedStartsOneHubPerEmbeddedTarget(t *testing.T) {
	e, sink := syncedEmbedded(t)
	plain, keyed := mustURL(t, e, "plain"), mustURL(t, e, "keyed")
	if plain == keyed || !negotiates(plain) || !negotiates(keyed) {
		t.Errorf("hubs at %s and %s: want two hubs that answer negotiate", plain, keyed)
	}
	if _, ok := e.URL("remote"); ok {
		t.Error("a hub runs for the remote target")
	}
	if _, ok := e.ConnectionString("plain"); ok {
		t.Error("the hub without an access key has a connection string")
	}
	if cs, ok := e.ConnectionString("keyed"); !ok || !strings.Contains(cs, "AccessKey=embedded-key;") {
		t.Errorf("connection string of the keyed hub: %q, %v", cs, ok)
	}
	if got := sink.targets(); strings.Join(got, ",") != "plain,keyed" {
		t.Errorf("load reported for %v, want plain and keyed", got)
	}
	if err := testutil.GatherAndCompare(e, strings.NewReader(connectionsByTarget), "hubprobe_hub_connections"); err != nil {
		t.Errorf("gathered hub metrics: %v", err)
	}
}

// A changed delay is applied in place, any other change restarts the hub,
// a target that is gone loses its hub, and Close stops the rest.
func TestEmbeddedSyncFollowsTheConfig(t *testing.T) {
	e, sink := syncedEmbedded(t)
	plain, keyed := mustURL(t, e, "plain"), mustURL(t, e, "keyed")
	if err := e.Sync(embeddedConfig(300*time.Millisecond, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if got := mustURL(t, e, "plain"); got != plain {
		t.Errorf("a changed delivery delay restarted the hub (%s, then %s)", plain, got)
	}
	if took := echoTakes(t, plain); took < 300*time.Millisecond {
		t.Errorf("an echo took %v after the change, want the delivery delay of 300ms at least", took)
	}
	if got := mustURL(t, e, "keyed"); got == keyed || negotiates(keyed) || !negotiates(got) {
		t.Errorf("a changed message size kept the old hub at %s (now %s)", keyed, got)
	}
	cfg := embeddedConfig(300*time.Millisecond, 1<<20)
	cfg.Targets = cfg.Targets[1:]
	if err := e.Sync(cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.URL("plain"); ok || negotiates(plain) {
		t.Error("the hub of the removed target still runs")
	}
	e.Close()
	if got := sink.targets(); len(got) != 0 || strings.Join(sink.removed, ",") != "keyed,plain,keyed" {
		t.Errorf("after Close load is reported for %v, removed %v; want none, removed keyed, plain, keyed", got, sink.removed)
	}
}

// The hub of a Web PubSub target sends its user events to the event
// handler the daemon set, the hub of a SignalR target to none; turning a
// target into a Web PubSub one restarts its hub with the handler and a key.
func TestEmbeddedWebPubSubEventHandler(t *testing.T) {
	const template = "http://127.0.0.1:9/webpubsub/{hub}/events"
	e := newEmbeddedHubs(context.Background(), zerolog.Nop(), nil)
	t.Cleanup(e.Close)
	e.SetWebPubSubEventHandler(template)
	cfg := &config.Config{Targets: []config.Target{
		{Name: "wps", Service: config.ServiceWebPubSub, Embedded: true, EmbeddedHub: config.EmbeddedHub{MaxMessageSize: 1 << 10}},
		{Name: "signalr", Service: config.ServiceSignalR, Embedded: true, EmbeddedHub: config.EmbeddedHub{MaxMessageSize: 1 << 10}},
	}}
	if err := e.Sync(cfg); err != nil {
		t.Fatal(err)
	}
	handlerOf := func(target string) string { return e.running[target].opts.WebPubSubEventHandler }
	if got := handlerOf("wps"); got != template {
		t.Errorf("Web PubSub target's hub sends events to %q, want %q", got, template)
	}
	if got := handlerOf("signalr"); got != "" {
		t.Errorf("SignalR target's hub sends events to %q, want none", got)
	}
	// Without a key in the config the Web PubSub hub makes one up, the
	// same for every hub of the process; the SignalR hub emulates nothing.
	cs, ok := e.ConnectionString("wps")
	if key := e.running["wps"].opts.AccessKey; !ok || len(key) < 40 || !strings.Contains(cs, "AccessKey="+key+";") || key != webPubSubKey() {
		t.Errorf("Web PubSub hub without a configured key: connection string given %v, key of %d bytes", ok, len(key))
	}
	if _, ok := e.ConnectionString("signalr"); ok {
		t.Error("the SignalR hub without a key has a connection string")
	}
	cfg.Targets[1].Service = config.ServiceWebPubSub
	if err := e.Sync(cfg); err != nil {
		t.Fatal(err)
	}
	if got := handlerOf("signalr"); got != template || !e.running["signalr"].opts.EmulatesAzure() {
		t.Errorf("after turning into a Web PubSub target, its hub sends events to %q, want %q, with a key", got, template)
	}
}

// An embedded target's entra_issuer and disable_local_auth reach its hub:
// the access key no longer signs anything it takes, and its connection
// string is the keyless one.
func TestEmbeddedEntraSettings(t *testing.T) {
	e := newEmbeddedHubs(context.Background(), zerolog.Nop(), nil)
	t.Cleanup(e.Close)
	hubCfg := config.EmbeddedHub{AccessKey: "embedded-key", EntraIssuer: "https://127.0.0.1:1/tenant/v2.0", DisableLocalAuth: true}
	if err := e.Sync(&config.Config{Targets: []config.Target{{Name: "entra", Embedded: true, EmbeddedHub: hubCfg}}}); err != nil {
		t.Fatal(err)
	}
	origin := strings.TrimSuffix(mustURL(t, e, "entra"), hub.DefaultPath)
	if cs, ok := e.ConnectionString("entra"); !ok || cs != "Endpoint="+origin+";AuthType=azure;Version=1.0;" {
		t.Errorf("connection string %q, %v; want the keyless form", cs, ok)
	}
	status, body := restSend(t, origin+"/api/v1/hubs/chat", "embedded-key")
	if status != http.StatusUnauthorized || body != hub.LocalAuthDisabledText {
		t.Errorf("access-key REST call: %d %q, want 401 %q", status, body, hub.LocalAuthDisabledText)
	}
}

// restSend sends a message through the REST API at url with a token signed
// with key, and returns the answer.
func restSend(t *testing.T, url, key string) (int, string) {
	t.Helper()
	token, err := azure.MintToken([]byte(key), azure.TokenClaims{Audience: url, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"target":"x","arguments":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// The configuration offers the hub's drills, no more and no fewer.
func TestConfigDrillsAreTheHubs(t *testing.T) {
	var hubs []string
	for _, d := range hub.Drills {
		hubs = append(hubs, string(d))
	}
	if !slices.Equal(config.Drills, hubs) {
		t.Errorf("config.Drills %v, the hub's %v", config.Drills, hubs)
	}
}
