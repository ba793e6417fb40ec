package scenarios_test

import (
	"net/http"
	"testing"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// wpsFault is one way a Web PubSub service misbehaves, and the faultCase
// hubprobe's report must match (its script field unused).
type wpsFault struct {
	script wpsScript
	faultCase
}

// wpsMidRun is a fault struck after each connection's first answered echo:
// bytes the subprotocol does not allow.
func wpsMidRun(name string, frames []string, errText string) wpsFault {
	return wpsFault{script: wpsScript{after: 1, frames: frames},
		faultCase: faultCase{name: name, reason: scenarios.FailClosed, drop: clientconn.DropProtocol, bound: midRunBound, errText: errText}}
}

// closedBy is the error of a run whose two connections the client ended
// on a protocol violation.
func closedBy(violation string) string {
	return `^2 of 2 connections closed during the run: webpubsub client: protocol violation: ` + violation + `$`
}

var wpsFaults = []wpsFault{
	wpsMidRun("garbage frame", []string{"\xffgarbage"}, closedBy(`webpubsub: invalid frame: .*`)),
	wpsMidRun("binary frame", []string{"\x00" + "\x93\x01"}, closedBy(`a binary frame; the JSON subprotocols send text frames`)),
	wpsMidRun("invalid JSON", []string{`{"type":"message","from":"server","data":`},
		closedBy(`webpubsub: invalid frame: unexpected end of frame at offset 41`)),
	wpsMidRun("ack for an unknown id", []string{`{"type":"ack","ackId":77,"success":true}`},
		closedBy(`an ack for ackId 77, which this connection never sent`)),
	wpsMidRun("system message without an event", []string{`{"type":"system"}`},
		closedBy(`webpubsub: invalid frame: "system" frame has no "event"`)),
	wpsMidRun("disconnected with a number for a reason", []string{`{"type":"system","event":"disconnected","message":42}`},
		closedBy(`webpubsub: invalid frame: field "message": want string, got number`)),
	{script: wpsScript{after: 1, deaf: true},
		faultCase: faultCase{name: "half-open after the first answer", reason: scenarios.FailClosed, drop: clientconn.DropKeepAlive, bound: midRunBound,
			errText: `^2 of 2 connections closed during the run: probe: server timeout: no answer to a WebSocket ping within 1s; the connection is half-open$`}},
	{script: wpsScript{upgradeStatus: http.StatusTooManyRequests, upgradeBody: throttle.ConnectionLimitText},
		faultCase: faultCase{name: "upgrade 429", reason: scenarios.FailThrottled, bound: connectBound,
			throttled: map[string]float64{throttle.ConnectionLimit: 2},
			errText:   `^2 of 2 connections failed: throttled \(connection_limit\): probe: connect failed \(transport\) in upgrade: HTTP 429: WebSocket upgrade refused with HTTP 429$`}},
}

// Bad bytes from a Web PubSub service, and a refused upgrade, end the run
// as failed, with the reason counted under the same series as for SignalR,
// and soon: hubprobe notices the fault itself rather than waiting for its
// timeout. Each case runs twice on one runner.
func TestWebPubSubFaults(t *testing.T) {
	for _, fc := range wpsFaults {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			svc := startWPSService(t, fc.script)
			runner, rec := wpsFaultRunner(t, svc, "echo", fc.name)
			for range 2 {
				res := runBounded(t, runner)
				t.Logf("%s: sent/received/lost %d/%d/%d: %s", res.Outcome, res.Sent, res.Received, res.Lost, res.Error)
				checkResult(t, fc.faultCase, res)
			}
			checkFaultCounts(t, fc.faultCase, rec, 2)
			if (len(fc.script.frames) > 0 || fc.script.deaf) && svc.struck.Load() != 4 {
				t.Errorf("the fault struck %d connections, want 4", svc.struck.Load())
			}
		})
	}
}

// wpsFaultRunner runs a short scenario of kind against svc, into the
// recorder it returns.
func wpsFaultRunner(t *testing.T, svc *wpsService, kind, name string) (*scenarios.Runner, *scenariostest.Recorder) {
	t.Helper()
	s := faultScenario(name, 2)
	s.Kind, s.Protocol = kind, webpubsub.ProtocolJSON
	rec := scenariostest.NewRecorder()
	return &scenarios.Runner{Scenario: s, Endpoint: svc.endpoint(t), Recorder: rec}, rec
}

// A 429 on every REST send fails the run as throttled: each of the 20
// scheduled sends is refused or falls due while the target pauses, and
// none counts as sent.
func TestWebPubSubREST429(t *testing.T) {
	svc := startWPSService(t, wpsScript{restStatus: http.StatusTooManyRequests, restBody: "Too Many Requests"})
	runner, rec := wpsFaultRunner(t, svc, "rest_broadcast", "rest-429")
	res := runBounded(t, runner)
	checkResult(t, faultCase{bound: midRunBound,
		errText: `^throttled \(http_429\): the hub refused \d+ sends, \d+ more fell due while paused: azure: REST send to all: HTTP 429$`}, res)
	refused := float64(rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "rest", Code: 429}])
	if res.Sent != 0 || refused < 1 || refused != float64(svc.rest.Load()) || float64(res.Paused) != 20-refused {
		t.Errorf("sent %d, refused %v of %d REST calls, paused %d; want 0 sent and 20 refused or paused", res.Sent, refused, svc.rest.Load(), res.Paused)
	}
	checkCount(t, "hubprobe_throttled_total", rec.Tally().Throttled[throttle.HTTP429], 20)
}

// A service that closes its connections with "Message count reaches
// limit." fails the run as throttled: both connections count under the
// throttled failure reason, and with the sends held while the target
// pauses, under message_limit.
func TestWebPubSubClosedForTheMessageLimit(t *testing.T) {
	svc := startWPSService(t, wpsScript{after: 1, frames: []string{
		`{"type":"system","event":"disconnected","message":"` + throttle.MessageLimitText + `"}`}})
	runner, rec := wpsFaultRunner(t, svc, "echo", "message-limit")
	res := runBounded(t, runner)
	checkResult(t, faultCase{bound: midRunBound,
		errText: `^2 of 2 connections closed during the run: probe: server closed the connection: Message count reaches limit\.$`}, res)
	checkCount(t, "hubprobe_connection_failures_total", rec.Tally().Failed[scenarios.FailThrottled], 2)
	checkCount(t, "hubprobe_connection_drops_total{reason=throttled}", rec.Tally().Dropped[clientconn.DropThrottled], 2)
	limited := float64(rec.Tally().Throttled[throttle.MessageLimit])
	if limited < 2 || limited != float64(res.Throttled[throttle.MessageLimit]) {
		t.Errorf("throttled_total{message_limit} = %v, result %d; want the 2 closes and the held sends, alike", limited, res.Throttled[throttle.MessageLimit])
	}
}
