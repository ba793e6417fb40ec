package statuspage

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// statusServer serves the pages of a history that holds one failed run,
// followed by enough successful runs of another scenario to push that
// failure out of the recent list.
func statusServer(t *testing.T, limit, successes int) (http.Handler, *History) {
	t.Helper()
	h := NewHistory(limit)
	h.Add(failedRun())
	for i := range successes {
		h.Add(scenarios.Result{
			Target: "hub-a", Scenario: "broadcast", Kind: "broadcast",
			Outcome: scenarios.ResultSuccess, Start: runStart.Add(time.Duration(i+1) * time.Minute),
			Received: 5, Latency: scenarios.Quantiles{P99: 40 * time.Millisecond},
		})
	}
	pg := routed(Options{
		History: h, Version: "1.2.3",
		Scenarios: func() []ScenarioStatus {
			return []ScenarioStatus{
				{Name: "echo-ws", Target: "hub-a", Kind: "echo", Schedule: "@every 1m"},
				{Name: "broadcast", Target: "hub-a", Kind: "broadcast", Schedule: "*/5 * * * *"},
				{Name: "stream", Target: "hub-b", Kind: "streaming", Schedule: "@every 10m"},
			}
		},
	})
	return pg, h
}

func TestStatusPageShowsEscapedError(t *testing.T) {
	pg, _ := statusServer(t, 100, 2)
	code, body := get(pg, "/")
	if code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	errText := failedRun().Error
	if !strings.Contains(body, templateEscaped(errText)) {
		t.Fatalf("status page lacks the escaped error %q:\n%s", templateEscaped(errText), body)
	}
	if strings.Contains(body, errText) {
		t.Fatal("status page contains the raw, unescaped error text")
	}
	for _, want := range []string{"hub-a", "echo-ws", "@every 1m", "*/5 * * * *", "not run yet", "1.2s", "failure", "1.2.3"} {
		if !strings.Contains(body, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	if code, _ := get(pg, "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", code)
	}
}

func TestStatusKeepsFailureAfterRecentListMovesOn(t *testing.T) {
	pg, h := statusServer(t, 3, 10)
	if got := len(h.Recent()); got != 3 {
		t.Fatalf("%d recent runs, want 3", got)
	}
	_, body := get(pg, "/")
	if !strings.Contains(body, "Earlier failures") || !strings.Contains(body, templateEscaped(failedRun().Error)) {
		t.Fatalf("pushed-out failure not shown:\n%s", body)
	}

	code, raw := get(pg, "/status.json")
	if code != 200 {
		t.Fatalf("GET /status.json: %d", code)
	}
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Recent) != 3 || len(st.OlderFailures) != 1 || len(st.Scenarios) != 3 {
		t.Fatalf("status.json: %d recent, %d older failures, %d scenarios; want 3, 1, 3",
			len(st.Recent), len(st.OlderFailures), len(st.Scenarios))
	}
	f := st.OlderFailures[0]
	if f.Error != failedRun().Error || f.Lost != 1 || f.Latency == nil || f.Latency.P99 != 1.2 {
		t.Fatalf("older failure = %+v", f)
	}
	echo := st.Scenarios[1] // sorted: broadcast, echo-ws, then hub-b's stream
	if echo.Scenario != "echo-ws" || echo.LastRun == nil || echo.LastRun.Outcome != "failure" || echo.LastRun.Sent != 10 {
		t.Fatalf("echo-ws row = %+v", echo)
	}
	if st.Scenarios[2].LastRun != nil {
		t.Fatalf("never-run scenario has a last run: %+v", st.Scenarios[2].LastRun)
	}
}

// search is a capacity search of echo-ws whose second step broke the 1 s
// rule: the capacity is its first, 4 senders sending 40 messages a second.
func search() capacity.Capacity {
	held := capacity.Step{
		Number: 1, Senders: 4, Duration: 10 * time.Second, Sent: 400, Expected: 400, Received: 400,
		SentBytes: 1000000, ReceivedBytes: 1040000, Latency: scenarios.Quantiles{P50: 5 * time.Millisecond, P99: 300 * time.Millisecond},
	}
	slow := held
	slow.Number, slow.Senders, slow.Slow, slow.Verdict = 2, 6, 100, capacity.StopSlowMessages
	slow.Latency.P99 = 1500 * time.Millisecond
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind, s.Connections = "echo-ws", "hub-a", "echo", 10
	return capacity.Capacity{
		Result: scenarios.Result{Target: "hub-a", Scenario: "echo-ws", Kind: "echo",
			Start: runStart, Duration: 20 * time.Second, Outcome: scenarios.ResultSuccess},
		Scenario: s, Steps: []capacity.Step{held, slow}, StopReason: capacity.StopSlowMessages,
	}
}

func TestStatusShowsProfileCapacityAndPlot(t *testing.T) {
	log := NewCapacityLog()
	log.Add("hub-a", "echo-ws", search())
	pg := routed(Options{
		Capacity: log,
		Scenarios: func() []ScenarioStatus {
			return []ScenarioStatus{{Name: "echo-ws", Target: "hub-a", Kind: "echo", Schedule: "@daily",
				Mode: "capacity_search", Profile: "signalr echo, unit 10 × 0.01: 100 connections, 100 senders"}}
		},
	})
	_, page := get(pg, "/")
	for _, want := range []string{"signalr echo, unit 10 × 0.01: 100 connections", "echo (capacity search)",
		"Capacity searches", "slow_messages", "40.00", `href="capacity/hub-a/echo-ws/plot.svg"`} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	_, body := get(pg, "/status.json")
	var status struct {
		Scenarios []struct{ Profile, Mode string } `json:"scenarios"`
		Capacity  []capacityView                   `json:"capacity_searches"`
	}
	if err := json.Unmarshal([]byte(body), &status); err != nil {
		t.Fatal(err)
	}
	if len(status.Capacity) != 1 || status.Capacity[0].InboundMessagesPerSecond != 40 || status.Capacity[0].Senders != 4 ||
		status.Scenarios[0].Mode != "capacity_search" || status.Scenarios[0].Profile == "" {
		t.Errorf("status.json: %+v", status)
	}
	plot := ask(pg, "/capacity/hub-a/echo-ws/plot.svg")
	if plot.Code != http.StatusOK || plot.Header().Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("plot: %d %s", plot.Code, plot.Header().Get("Content-Type"))
	}
	if err := xml.Unmarshal(plot.Body.Bytes(), new(struct{})); err != nil {
		t.Errorf("plot is not well-formed XML: %v", err)
	}
	if code, _ := get(pg, "/capacity/hub-a/nope/plot.svg"); code != http.StatusNotFound {
		t.Errorf("plot of a scenario without a search: %d, want 404", code)
	}
}

func TestScenarioStatusesFollowTheConfig(t *testing.T) {
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind, s.Schedule = "echo", "local", "echo", "@every 1m"
	got := ScenarioStatuses([]config.Scenario{s})
	want := ScenarioStatus{Name: "echo", Target: "local", Kind: "echo", Schedule: "@every 1m", Mode: s.Mode}
	if len(got) != 1 || got[0] != want {
		t.Errorf("statuses %+v, want [%+v]", got, want)
	}
}

// A daemon that has run nothing yet shows its scenarios, no runs and no
// searches, as a page and as empty lists.
func TestStatusBeforeAnyRun(t *testing.T) {
	pg := routed(Options{History: NewHistory(0), Capacity: NewCapacityLog(), Scenarios: func() []ScenarioStatus {
		return []ScenarioStatus{{Name: "echo", Target: "local", Kind: "echo", Schedule: "@every 30s"}}
	}})
	if code, body := get(pg, "/"); code != http.StatusOK || !strings.Contains(body, "not run yet") {
		t.Errorf("GET /: %d, want 200 saying the scenario has not run yet:\n%s", code, body)
	}
	code, raw := get(pg, "/status.json")
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil || code != http.StatusOK {
		t.Fatalf("GET /status.json: %d, %v", code, err)
	}
	if len(st.Scenarios) != 1 || st.Scenarios[0].LastRun != nil || len(st.Recent) != 0 || len(st.OlderFailures) != 0 || len(st.Capacity) != 0 {
		t.Errorf("status.json before any run: %+v", st)
	}
}

// A run that delivered nothing has no latency figures, rather than zeros.
func TestRunWithoutDeliveriesHasNoLatency(t *testing.T) {
	h := NewHistory(0)
	silent := run("echo", scenarios.ResultFailure, 1)
	silent.Sent, silent.Expected = 3, 3
	h.Add(silent)
	h.Add(failedRun())
	_, raw := get(routed(Options{History: h}), "/status.json")
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Recent) != 2 || st.Recent[0].Latency == nil || st.Recent[1].Latency != nil {
		t.Errorf("recent runs %+v, want the failed run's latency and none for the silent one", st.Recent)
	}
}

// Latencies keep microseconds, durations of a second and more
// milliseconds.
func TestFormatSeconds(t *testing.T) {
	for s, want := range map[float64]string{0.0012346: "1.235ms", 0.000042: "42µs", 2.3456: "2.346s", 1: "1s", 0: "0s"} {
		if got := formatSeconds(s); got != want {
			t.Errorf("formatSeconds(%g) = %q, want %q", s, got, want)
		}
	}
}

// The searches are listed by target, then scenario.
func TestCapacitySearchesInOrder(t *testing.T) {
	log := NewCapacityLog()
	for _, name := range [][2]string{{"hub-b", "echo"}, {"hub-a", "zeta"}, {"hub-a", "echo-ws"}} {
		c := search()
		c.Result.Target, c.Result.Scenario = name[0], name[1]
		log.Add(name[0], name[1], c)
	}
	_, raw := get(routed(Options{Capacity: log}), "/status.json")
	var st statusView
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range st.Capacity {
		got = append(got, c.Target+"/"+c.Scenario)
	}
	if strings.Join(got, " ") != "hub-a/echo-ws hub-a/zeta hub-b/echo" {
		t.Errorf("searches listed as %v, want by target, then scenario", got)
	}
}

// A failed run's throttles and drops reach /status.json and the pages, by
// reason.
func TestStatusShowsThrottlesAndDrops(t *testing.T) {
	h := NewHistory(10)
	res := failedRun()
	res.Throttled = map[string]int64{"connection_limit": 2}
	res.Drops, res.Reconnects = map[string]int64{"server_reconnect": 2, "transport": 1}, 3
	h.Add(res)
	pg := routed(Options{History: h})
	code, body := get(pg, "/status.json")
	var status struct {
		Recent []struct {
			Throttled  map[string]int64 `json:"throttled"`
			Drops      map[string]int64 `json:"drops"`
			Reconnects int64            `json:"reconnects"`
		} `json:"recent_runs"`
	}
	if err := json.Unmarshal([]byte(body), &status); err != nil || code != 200 || len(status.Recent) != 1 {
		t.Fatalf("GET /status.json: %d, %v: %s", code, err, body)
	}
	got := status.Recent[0]
	if got.Throttled["connection_limit"] != 2 || got.Drops["server_reconnect"] != 2 || got.Drops["transport"] != 1 || got.Reconnects != 3 {
		t.Errorf("status.json run: %+v", got)
	}
	const said = "3 (server_reconnect 2, transport 1)"
	if _, page := get(pg, "/"); !strings.Contains(page, said) {
		t.Errorf("status page lacks %q", said)
	}
	if _, page := get(pg, "/runs/"+res.RunID); !strings.Contains(page, said+"; reconnected 3") {
		t.Errorf("run page lacks %q", said)
	}
}
