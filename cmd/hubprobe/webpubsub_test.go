package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// The embedded default runs its Web PubSub scenarios against the embedded
// hub's emulation, the upstream echo through hubprobe's own event handler,
// with no setup: within a minute both have latency histograms, and a
// finished run of each received every expected delivery. The event handler
// also answers on the web listener, for real services.
func TestDefaultConfigRunsWebPubSub(t *testing.T) {
	began := time.Now()
	hubprobe, addr := childOnFreePort(t, "the daemon", 10*time.Second, nil, nil, "--web.listen-address", daemonServes(t))
	defer func() {
		if err := hubprobe.stop(); err != nil {
			t.Errorf("hubprobe exited with %v after SIGTERM\n%s", err, hubprobe.log)
		}
	}()
	perRun := map[string]float64{"webpubsub_send_to_group": 20 * 10 * 10, "webpubsub_echo": 10 * 10}
	for name := range perRun {
		scenario := map[string]string{"target": "webpubsub", "scenario": name}
		waitFor(t, name+" latencies", time.Minute-time.Since(began), func() bool {
			v, ok := value(scrape(t, addr), "hubprobe_message_latency_seconds", scenario)
			return ok && v > 0
		})
	}
	t.Logf("both Web PubSub scenarios measured %v after the start", time.Since(began).Round(time.Second))
	for name, want := range perRun {
		checkFinishedRun(t, addr, name, want)
	}
	checkHandshakeOnWebListener(t, addr)
	families := scrape(t, addr)
	echoes, _ := value(families, "hubprobe_webpubsub_events_total", map[string]string{"event": "user", "code": "200"})
	received, _ := value(families, "hubprobe_messages_received_total", map[string]string{"scenario": "webpubsub_echo"})
	if echoes < received || received == 0 {
		t.Errorf("the event handler answered %v user events, fewer than the %v echoes received", echoes, received)
	}
	if v, _ := value(families, "hubprobe_webpubsub_events_total", map[string]string{"event": "validate", "code": "200"}); v < 2 {
		t.Errorf("handshakes answered: %v, want the embedded hub's and this test's", v)
	}
}

// checkFinishedRun waits for a run of scenario to end and checks that its
// runs so far succeeded and lost nothing.
func checkFinishedRun(t *testing.T, addr, scenario string, perRun float64) {
	t.Helper()
	labels := map[string]string{"target": "webpubsub", "scenario": scenario}
	waitFor(t, scenario+" to finish a run", 45*time.Second, func() bool {
		v, ok := value(scrape(t, addr), "hubprobe_runs_total", map[string]string{"scenario": scenario, "result": "success"})
		return ok && v >= 1
	})
	families := scrape(t, addr)
	runs, _ := value(families, "hubprobe_runs_total", map[string]string{"scenario": scenario, "result": "success"})
	failed, _ := value(families, "hubprobe_runs_total", map[string]string{"scenario": scenario, "result": "failure"})
	received, _ := value(families, "hubprobe_messages_received_total", labels)
	lost, _ := value(families, "hubprobe_messages_lost_total", labels)
	// A run in progress may have received part of its messages already.
	if failed != 0 || lost != 0 || received < runs*perRun || received > (runs+1)*perRun {
		t.Errorf("%s: %v runs succeeded, %v failed; received %v, lost %v; want %v per run, none lost", scenario, runs, failed, received, lost, perRun)
	}
}

func checkHandshakeOnWebListener(t *testing.T, addr string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, "http://"+addr+"/webpubsub/hubprobe/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = webpubsub.ValidationHeader("probe.webpubsub.azure.com")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get(webpubsub.HeaderAllowedOrigin) != "*" {
		t.Errorf("abuse-protection handshake on the web listener: %d, allowed origin %q; want 200, *", res.StatusCode, res.Header.Get(webpubsub.HeaderAllowedOrigin))
	}
}

// `hubprobe run` measures the upstream echo of a Web PubSub service in
// another process (here `hubprobe hub`, whose event handler is the run's
// own, on --webpubsub.listen-address), as a team would against a real
// service: every echo comes back through the handler.
func TestRunUpstreamEchoAgainstAnotherProcess(t *testing.T) {
	const key = "run-upstream-echo-key"
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	// The hub is told the handler's address before the run listens on it,
	// so a handler address taken meanwhile means both start again.
	var out []byte
	var err error
	for attempt := 1; ; attempt++ {
		var errOut string
		out, errOut, err = runUpstreamEcho(t, key, keyFile, freePort(t))
		if !strings.Contains(errOut, addressTaken) || attempt == portAttempts {
			break
		}
	}
	var rep struct {
		Sent, Received, Lost int64
		Success              bool
	}
	if jerr := json.Unmarshal(out, &rep); err != nil || jerr != nil || rep.Sent != 15 || rep.Received != 15 || rep.Lost != 0 || !rep.Success {
		t.Fatalf("run: %v; report %+v (%s), want 15 sent and received, nothing lost", err, rep, out)
	}
}

// runUpstreamEcho runs the echo once through `hubprobe hub` emulating the
// service, with the event handler of `hubprobe run` on handlerAddr.
func runUpstreamEcho(t *testing.T, key, keyFile, handlerAddr string) (out []byte, errOut string, err error) {
	t.Helper()
	hub, hubAddr := childOnFreePort(t, "the hub", 10*time.Second, nil, []string{"hub", "--access-key-file", keyFile,
		"--webpubsub.event-handler", "http://" + handlerAddr + "/webpubsub/{hub}/events"}, "--listen", hubListens(t))
	defer func() { _ = hub.stop() }()
	cfg := strings.NewReplacer("embedded: true", "service: webpubsub\n    hub: probe\n    connection_string: \"Endpoint=http://"+hubAddr+";AccessKey="+key+";Version=1.0;\"").Replace(quickEcho)
	var stderr bytes.Buffer
	run := exec.Command(hubprobeBinary(t), "run", "--config.file", writeConfig(t, cfg), "--scenario", "echo",
		"--output", "json", "--webpubsub.listen-address", handlerAddr)
	run.Stderr = &stderr
	out, err = run.Output()
	return out, stderr.String(), err
}
