package scenarios_test

import (
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/webpubsub"
	"github.com/hubprobe/hubprobe/webpubsub/eventhandler"
)

// wpsHub is the Web PubSub hub name of these tests.
const wpsHub = "probe"

// startWebPubSub serves the reference hub's Web PubSub emulation, with
// hubprobe's event handler (answering after delay) as its event handler,
// and returns the endpoint that reaches it.
func startWebPubSub(t testing.TB, delay time.Duration, opts hub.Options) scenarios.Endpoint {
	t.Helper()
	_, ep := startWebPubSubServer(t, delay, opts)
	return ep
}

// startWebPubSubServer is startWebPubSub that also returns the hub.
func startWebPubSubServer(t testing.TB, delay time.Duration, opts hub.Options) (*hub.Server, scenarios.Endpoint) {
	t.Helper()
	h := eventhandler.New(eventhandler.Options{Delay: delay})
	h.SetHubs(map[string][]string{wpsHub: {matrixKey}})
	events := localtest.Server(t, h)
	opts.AccessKey, opts.WebPubSubEventHandler = matrixKey, eventhandler.URL(events.URL)
	srv := hubtest.Start(t, opts)
	cs, err := azure.ParseConnectionString(srv.ConnectionString())
	if err != nil {
		t.Fatal(err)
	}
	return srv, scenariostest.WebPubSub(cs, wpsHub)
}

// webPubSubCases are the kinds of a Web PubSub target with the exact
// counts of their small runs: 3 sends per sender.
var webPubSubCases = []matrixCase{
	{kind: "echo", conns: 4, sent: 12, expected: 12},
	// Groups of 2, 2 and 1: 4 senders reach 2 members, 1 reaches 1.
	{kind: "send_to_group", conns: 5, group: 2, sent: 15, expected: 27},
	{kind: "rest_broadcast", conns: 3, senders: 2, serverless: true, sent: 6, expected: 18},
	{kind: "rest_send_to_user", conns: 4, serverless: true, sent: 12, expected: 12},
	{kind: "rest_send_to_group", conns: 5, group: 2, serverless: true, sent: 15, expected: 27},
	{kind: "rest_send_to_connection", conns: 4, serverless: true, sent: 12, expected: 12},
}

// Every Web PubSub kind, over both JSON subprotocols, delivers exactly what
// it sent, fanned out per group member, against the reference hub: the
// upstream echo through hubprobe's own event handler.
func TestEveryWebPubSubKind(t *testing.T) {
	ep := startWebPubSub(t, 0, hub.Options{})
	var wg sync.WaitGroup
	for _, mc := range webPubSubCases {
		for _, protocol := range []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(mc.kind+"/"+protocol, func(t *testing.T) {
					o := runEndpoint(t, ep, mc.scenario("websockets", protocol))
					assertCounts(t, o, mc.sent, mc.expected)
					mc.checkExtras(t, o)
					checkCount(t, "hubprobe_http_requests_total", o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "upgrade", Code: 101}], float64(mc.conns))
					if o.res.SentBytes == 0 || o.res.ReceivedBytes == 0 {
						t.Errorf("bytes sent/received %d/%d, want both counted", o.res.SentBytes, o.res.ReceivedBytes)
					}
				})
			}()
		}
	}
	wg.Wait()
}

// The upstream echo measures the event handler's round trip: with the
// handler holding every answer 200 ms, the median lies within 200–230 ms.
func TestUpstreamEchoMeasuresTheEventHandler(t *testing.T) {
	const delay = 200 * time.Millisecond
	ep := startWebPubSub(t, delay, hub.Options{})
	s := scenario("echo", 5, time.Second, 100*time.Millisecond)
	s.Protocol = webpubsub.ProtocolJSON
	o := runEndpoint(t, ep, s)
	assertCounts(t, o, 50, 50)
	t.Logf("upstream echo latency %+v", o.res.Latency)
	if p50 := o.res.Latency.P50; p50 < delay || p50 > delay+30*time.Millisecond {
		t.Errorf("upstream echo p50 = %s, want within %s–%s", p50, delay, delay+30*time.Millisecond)
	}
}

// A capacity search ramps a Web PubSub scenario like a SignalR one: small
// groups through the subprotocol, every step delivered in full, until
// every connection sends.
func TestWebPubSubCapacitySearch(t *testing.T) {
	ep := startWebPubSub(t, 0, hub.Options{})
	s := scenario("send_to_group", 4, time.Second, 100*time.Millisecond)
	s.Protocol, s.GroupSize, s.Mode = webpubsub.ProtocolJSON, 2, config.ModeCapacitySearch
	s.CapacitySearch = &config.CapacitySearch{BaseSending: 2, Step: 2, StepDuration: 300 * time.Millisecond}
	runner := &scenarios.Runner{Scenario: s, Endpoint: ep, Recorder: scenarios.Discard}
	c := capacity.Search(localtest.Ctx(t, 20*time.Second), runner, capacity.SearchOptions{})
	if c.StopReason != capacity.StopAllSending || len(c.Steps) != 2 {
		t.Fatalf("stopped for %q after %d steps (%s), want all_sending after 2", c.StopReason, len(c.Steps), c.Result.Error)
	}
	// 4 senders every 100 ms for 300 ms, each to a group of 2.
	if found, _ := c.Found(); found.Senders != 4 || found.Sent != 12 || found.Received != 24 {
		t.Errorf("last step: %d senders, %d sent, %d received; want 4, 12, 24", found.Senders, found.Sent, found.Received)
	}
}
