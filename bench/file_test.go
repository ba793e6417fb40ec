package bench_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/bench"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

const head = "mode: simple\nconfig:\n  webAppTarget: http://127.0.0.1:5050/signalrbench\n"

// Every file the benchmark would refuse, or hubprobe cannot run, fails
// with the file, the line and the key.
func TestBadFilesNameLineAndKey(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{head + "  conections: 10\n", `f.yaml:4: config: unknown key "conections"`},
		{"mode: simple\nconfig:\n  WebAppTarget: http://x\n", `f.yaml:3: config: unknown key "WebAppTarget"`},
		{head + "scenario:\n  name: echo\n  parameter:\n    messageSize: 10\n", `f.yaml:6: scenario: unknown key "parameter"`},
		{head + "  connections: 5\n   step: 5\n", `f.yaml:5: mapping values are not allowed in this context`},
		{head + "  connections: 1e3\n", `f.yaml:4: config.connections: expected a decimal whole number from 0 to 4294967295, got "1e3"`},
		{head + "  connections: 0100\n", `f.yaml:4: config.connections: expected a decimal whole number from 0 to 4294967295, got "0100"`},
		{head + "  connections: -1\n", `f.yaml:4: config.connections: expected a decimal whole number from 0 to 4294967295, got "-1"`},
		{head + "  connections:\n", `f.yaml:4: config.connections: empty value: the benchmark reads it as 0 or null, not as its default; write a value or leave the key out`},
		{head + "  connections: 5\n  connections: 6\n", `f.yaml:5: config: duplicate key "connections" (first at line 4)`},
		{head + "  debug: maybe\n", `f.yaml:4: config.debug: expected true or false, got "maybe"`},
		{"", `f.yaml: the file holds no YAML document`},
		{"config:\n  webAppTarget: http://x\n", `f.yaml: mode: mode: simple is required; hubprobe bench runs the benchmark's simple mode only`},
		{strings.Replace(head, "simple", "Simple", 1), `f.yaml:1: mode: only mode: simple is supported (the advanced pipeline format is not), got "Simple"`},
		{head + "kind: resultparser\n", `f.yaml:4: kind: resultparser reads the counters file of an earlier run; hubprobe bench runs the benchmark and does not parse its output`},
		{head + "kind: Perf\n", `f.yaml:4: kind: must be perf, perf2 or resultparser, got "Perf"`},
		{head + "scenario:\n  name: Echo\n", `f.yaml:5: scenario.name: unknown scenario "Echo" (valid: broadcast, echo, restBroadcast, restPersistBroadcast, restPersistSendToGroup, restPersistSendToUser, restSendToGroup, restSendToUser, sendToClient, sendToGroup, streamingEcho)`},
		{"mode: simple\nconfig:\n  connections: 5\n", `f.yaml:2: config: connectionString and webAppTarget cannot both be empty; give one of them`},
		{head + "scenario:\n  name: restBroadcast\n", `f.yaml:2: config: restBroadcast sends through the service's REST API and needs connectionString`},
		{"mode: simple\nconfig:\n  connectionString: Endpoint=https://x;AccessKey=k\n", `f.yaml:3: config.connectionString: echo with only a connectionString needs the benchmark's internal app server`},
		{"mode: simple\nconfig:\n  webAppTarget: http://a/signalrbench,http://b/signalrbench\n", `f.yaml:3: config.webAppTarget: several app server URLs are not supported`},
		{head + "  connectionType: AspNet\n", `f.yaml:4: config.connectionType: AspNet (classic ASP.NET SignalR) is not supported`},
		{head + "  transport: None\n", `f.yaml:4: config.transport: unknown transport "None" (valid: WebSockets, ServerSentEvents, LongPolling)`},
		{head + "  transport: serversentevents\n  protocol: MessagePack\n", `f.yaml:5: config.protocol: messagepack needs a binary transport; ServerSentEvents carries text only`},
		{head + "  arrivingBatchMode: highpress\n", `f.yaml:4: config.arrivingBatchMode: unknown mode "highpress" (valid: HighPress, LowPress, LimitRatePress, ExtLimitRatePress)`},
		{head + "  baseSending: 0\n", `f.yaml:4: config.baseSending: 0 runs no sending step`},
		{head + "  step: 0\n", `f.yaml:4: config.step: must be at least 1 (the benchmark divides by it)`},
		{head + "scenario:\n  name: sendToGroup\n", `f.yaml:4: scenario.parameters.groupCount: must be at least 1 for sendToGroup`},
		{head + "scenario:\n  parameters:\n    sendingInterval: 0\n", `f.yaml:6: scenario.parameters.sendingInterval: must be at least 1 (milliseconds)`},
		{head + "  connections: 200000\n", `f.yaml:4: config.connections: hubprobe cannot run this value: must be between 1 and 100000, got 200000`},
		{"mode: simple\nconfig:\n  webAppTarget: ftp://127.0.0.1/signalrbench\n", `f.yaml:3: config.webAppTarget: hubprobe cannot run this value:`},
		{"mode: simple\nconfig:\n  connectionString: AccessKey=k\nscenario:\n  name: restSendToUser\n", `f.yaml:3: config.connectionString: hubprobe cannot run this value:`},
	} {
		_, err := bench.Parse([]byte(c.data), "f.yaml")
		var yerr *yamldecode.Error
		if !errors.As(err, &yerr) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s…", c.data, err, c.want)
		}
	}
}

// The full-key template the benchmark prints is accepted, with a warning
// naming every key hubprobe does not use.
func TestTemplateWarnsAboutUnusedKeys(t *testing.T) {
	plan, err := bench.Load("testdata/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range plan.Warnings {
		got = append(got, w.Key)
		if w.File != "testdata/template.yaml" || w.Line == 0 {
			t.Errorf("warning %v does not name the file and line", w)
		}
	}
	want := "kind config.connectionString config.debug scenario.parameters.groupCount " +
		"scenario.parameters.streamingItemCount scenario.parameters.streamingItemSendDelay"
	if strings.Join(got, " ") != want {
		t.Errorf("warnings for %v, want %s", got, want)
	}
	for _, w := range plan.Warnings {
		if strings.Contains(w.Error(), "xxx") {
			t.Errorf("warning quotes the connection string: %v", w)
		}
	}
	if plan.URL == "" || plan.ConnectionString != "" {
		t.Errorf("template reaches URL %q, connection string set %v; want webAppTarget, as the benchmark does", plan.URL, plan.ConnectionString != "")
	}
}

// mapping is what a plan says about how a file runs.
type mapping struct {
	search      config.CapacitySearch
	steps       int
	kind        string
	group       int
	interval    time.Duration
	size        int
	serverless  bool
	concurrency int
}

// The files map onto hubprobe with the benchmark's defaults and ramp.
func TestExamplesMapWithTheBenchmarksDefaults(t *testing.T) {
	for file, want := range map[string]mapping{
		"minimal-echo.yaml":       {config.CapacitySearch{BaseSending: 500, Step: 500, StepDuration: 240 * time.Second}, 2, "echo", 0, time.Second, 2048, false, 50},
		"quickstart-echo.yaml":    {config.CapacitySearch{BaseSending: 500, Step: 500, StepDuration: time.Second}, 2, "echo", 0, time.Second, 2048, false, 50},
		"broadcast.yaml":          {config.CapacitySearch{BaseSending: 1, Step: 1, StepDuration: 240 * time.Second, MaxSteps: 1}, 1, "broadcast", 0, time.Second, 2048, false, 50},
		"send-to-group.yaml":      {config.CapacitySearch{BaseSending: 500, Step: 500, StepDuration: 240 * time.Second}, 2, "send_to_group", 2, time.Second, 2048, false, 50},
		"streaming-echo.yaml":     {config.CapacitySearch{BaseSending: 500, Step: 500, StepDuration: 240 * time.Second}, 2, "streaming_echo", 0, 500 * time.Millisecond, 1048, false, 50},
		"rest-send-to-group.yaml": {config.CapacitySearch{BaseSending: 500, Step: 500, StepDuration: 240 * time.Second}, 2, "rest_send_to_group", 2, time.Second, 2048, true, 50},
	} {
		plan, err := bench.Load("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		got := mapping{plan.Search, plan.Search.Steps(plan.Connections), plan.Kind, plan.GroupSize, plan.SendInterval, plan.MessageSize, plan.ConnectionString != "", plan.ConnectConcurrency}
		if got != want {
			t.Errorf("%s: mapped to %+v, want %+v", file, got, want)
		}
	}
}

// Values the benchmark tolerates with a warning keep working, warned.
func TestToleratedValuesWarn(t *testing.T) {
	for data, want := range map[string]string{
		head + "  connections: 10\n  baseSending: 20\n":                                                                   "f.yaml:5: config.baseSending: 20 is more than the 10 connections",
		head + "  protocol: protobuf\n":                                                                                   `f.yaml:4: config.protocol: "protobuf" is neither json nor messagepack`,
		head + "  connections: 30\n  baseSending: 10\nscenario:\n  name: restPersistBroadcast\n":                          "f.yaml:7: scenario.name: restPersistBroadcast runs as restBroadcast",
		head + "  connections: 30\n  baseSending: 10\nscenario:\n  name: sendToGroup\n  parameters:\n    groupCount: 7\n": "f.yaml:9: scenario.parameters.groupCount: 7 groups do not divide 30 connections",
		head + "  arrivingBatchWait: 10\n":                                                                                "f.yaml:4: config.arrivingBatchWait: not used",
		head + "  resultFilePath: out.txt\n":                                                                              "f.yaml:4: config.resultFilePath: not used",
	} {
		if strings.Contains(data, "restPersist") {
			data = strings.Replace(data, "  webAppTarget: http://127.0.0.1:5050/signalrbench\n", "  connectionString: Endpoint=http://127.0.0.1:5050;AccessKey=k\n", 1)
		}
		plan, err := bench.Parse([]byte(data), "f.yaml")
		if err != nil {
			t.Errorf("%q: %v", data, err)
			continue
		}
		if len(plan.Warnings) != 1 || !strings.HasPrefix(plan.Warnings[0].Error(), want) {
			t.Errorf("%q: warnings %v, want one starting %q", data, plan.Warnings, want)
		}
	}
}
