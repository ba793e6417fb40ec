package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/grafana"
)

// Time limits. The whole test normally takes about 45 s: the first scenario
// runs end within about 25 s of the start (a start offset of up to 10 s,
// then 10 s of sending), the slowed hub trips the alert within about 10 s
// of the reload, and the versions are compared once every scenario has run
// slowed (up to 30 s more). The seven Prometheus instances are checked at
// the same time. The limits leave room for a loaded machine.
const (
	testBudget         = 3 * time.Minute
	readyLimit         = 30 * time.Second
	firstRunsLimit     = 60 * time.Second
	dataLimit          = 30 * time.Second
	rulesLimit         = 20 * time.Second
	slowAlertLimit     = 60 * time.Second
	hubprobeStopGrace  = 15 * time.Second
	prometheusStopWait = 10 * time.Second
	pollEvery          = 500 * time.Millisecond
	// scrapesAfterRun is how many samples of every scenario's run result
	// Prometheus must hold before the queries are checked, so that rate()
	// over the dashboards' windows has points to work with.
	scrapesAfterRun = 3
	// evaluationsAfterData is how many rule evaluation cycles (1 s each)
	// must pass with data present before rule health is judged.
	evaluationsAfterData = 2
)

// The p99 < 1 s objective as the rules record it. The README shows it as
// PromQL written by hand; the test runs that query as it stands there.
const (
	slowShareRecord = "target_scenario:hubprobe_message_latency_slow:ratio_rate5m"
	sendLagRecord   = "target_scenario:hubprobe_send_lag_seconds:p99_rate5m"
	slowShareMax    = 0.01
)

// Documents whose PromQL examples must answer against real data.
const (
	readmePath  = "README.md"
	metricsPath = "docs/metrics.md"
)

// slowHub is what the reload adds to the embedded target: every delivery
// held back past the 1 s objective.
const slowHub = "    embedded: true\n    embedded_hub:\n      delivery_delay: 1.5s\n"

// TestDashboardsAndRulesAgainstRealPrometheus runs the built daemon on its
// default configuration under three real Prometheus instances, one per way
// of storing histograms (classic only, native only, both), that load the
// shipped rule file. In each it checks that every dashboard query, every
// recording rule and every documented query returns data, that every rule
// evaluates cleanly, where both forms are stored that the recorded series
// and the panels keep the native histogram's answer, that the latency
// histogram's exemplars name runs whose pages hubprobe serves, and that a
// hub slowed past 1 s trips the p99 alert.
func TestDashboardsAndRulesAgainstRealPrometheus(t *testing.T) {
	promBins := prometheusBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), testBudget)
	defer cancel()
	root := repoRoot(t)
	start := time.Now()

	hp := startHubprobe(ctx, t, root)
	proms := startPrometheuses(ctx, t, promBins, filepath.Join(root, "alerts", "hubprobe-rules.yml"), hp.addr)
	t.Logf("hubprobe and %d prometheus instances ready after %s", len(proms), since(start))

	inEachMode(t, "data", proms, func(t *testing.T, m modePrometheus) {
		waitForFirstRuns(ctx, t, m.prom)
		t.Logf("every scenario ran after %s", since(start))
		checkStorage(ctx, t, m)
		if m.mode == classic3 {
			checkLeNormalised(ctx, t, m.prom)
		}
		dataSince := time.Now()
		// No target of the default configuration has azure_monitor: the
		// queries of its figures are TestAzureMonitorAgainstRealPrometheus's.
		checkDashboardQueries(ctx, t, m.prom, notAzureMonitor)
		checkRecordingRulesReturnData(ctx, t, m.prom, notAzureMonitor)
		checkRulesHealthy(ctx, t, m.prom, dataSince)
		checkDocumentedQueries(ctx, t, m.prom)
		checkLatencySeriesFound(ctx, t, m.prom)
		checkExemplars(ctx, t, m.prom, hp.addr)
		if m.mode.native && m.mode.classic {
			checkNativeAnswerKept(ctx, t, m.prom)
		}
		t.Logf("dashboards and rules checked after %s", since(start))
	})
	if t.Failed() {
		return
	}
	// Where every instance's data agrees: the last run of each scenario
	// before the slowdown has settled in all of them.
	before := settledInstants(ctx, t, proms[0].prom, nil)

	reloaded := time.Now()
	hp.reloadWith(ctx, t, slowHubConfig(t))
	inEachMode(t, "slow hub", proms, func(t *testing.T, m modePrometheus) {
		waitForSlowMessageAlert(ctx, t, m.prom)
		t.Logf("slowed hub checked %s after the reload, %s after the start", since(reloaded), since(start))
	})
	if t.Failed() {
		return
	}
	after := settledInstants(ctx, t, proms[0].prom, before)
	t.Logf("%d figures of the slowed hub's runs agree between 2.x and 3.x, %s after the start",
		checkVersionsAgree(ctx, t, proms, before, after), since(start))
}

// inEachMode runs check against every Prometheus at once, one subtest per
// mode under the phase, and returns when all have ended. The subtests run
// in goroutines of their own rather than with t.Parallel, so that all modes
// run together whatever -parallel is (it defaults to the number of CPUs).
func inEachMode(t *testing.T, phase string, proms []modePrometheus, check func(*testing.T, modePrometheus)) {
	t.Helper()
	t.Run(phase, func(t *testing.T) {
		var wg sync.WaitGroup
		for _, m := range proms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(m.mode.name, func(t *testing.T) { check(t, m) })
			}()
		}
		wg.Wait()
	})
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// hubprobeProcess is the daemon under test and the file it reloads.
type hubprobeProcess struct {
	*process
	addr       string
	configPath string
}

func startHubprobe(ctx context.Context, t *testing.T, root string) *hubprobeProcess {
	return startHubprobeWith(ctx, t, root, e2eDefault(t), nil)
}

// e2eDefault is the embedded default with its held connections reported
// every 10 s rather than every minute, so that they have run samples as
// soon as the other scenarios.
func e2eDefault(t *testing.T) []byte {
	t.Helper()
	const held = "    kind: held\n"
	if strings.Count(string(config.DefaultYAML), held) != 1 {
		t.Fatalf("default.yml has no single held scenario (%q) to report faster", strings.TrimSpace(held))
	}
	return []byte(strings.Replace(string(config.DefaultYAML), held, held+"    held: {report_interval: 10s}\n", 1))
}

// startHubprobeWith runs the built daemon on cfg with env as its whole
// environment (nil: the test's own).
func startHubprobeWith(ctx context.Context, t *testing.T, root string, cfg []byte, env []string) *hubprobeProcess {
	building := time.Now()
	bin := buildHubprobe(ctx, t, root)
	t.Logf("built hubprobe in %s", since(building))
	configPath := filepath.Join(t.TempDir(), "hubprobe.yml")
	if err := os.WriteFile(configPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	p, addr := startOnFreeAddress(ctx, t, func(addr string) *process {
		return startProcessWithEnv(t, "hubprobe", bin, env, "--config.file", configPath, "--web.listen-address", addr)
	}, "/-/ready")
	t.Cleanup(func() {
		stopping := time.Now()
		exited, err := p.stop(hubprobeStopGrace)
		t.Logf("hubprobe stopped %s after SIGTERM", since(stopping))
		switch {
		case !exited:
			t.Errorf("hubprobe did not exit within %s of SIGTERM; killed", hubprobeStopGrace)
		case err != nil:
			t.Errorf("hubprobe exited with %v on SIGTERM, want status 0", err)
		}
		if t.Failed() {
			t.Logf("hubprobe log (last lines):\n%s", p.logTail(60))
		}
	})
	return &hubprobeProcess{process: p, addr: addr, configPath: configPath}
}

// reloadWith replaces the config file and asks hubprobe to re-read it.
func (h *hubprobeProcess) reloadWith(ctx context.Context, t *testing.T, cfg []byte) {
	t.Helper()
	if err := os.WriteFile(h.configPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+h.addr+"/-/reload", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /-/reload: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /-/reload: %s: %s", resp.Status, body)
	}
}

// slowHubConfig is the default configuration with the deliveries of its
// embedded hubs (the SignalR, Web PubSub and classic targets') delayed past the
// 1 s objective.
func slowHubConfig(t *testing.T) []byte {
	t.Helper()
	const embedded = "    embedded: true\n"
	if n := strings.Count(string(config.DefaultYAML), embedded); n != 3 {
		t.Fatalf("default.yml has %d lines %q, want the three embedded targets to add embedded_hub to", n, strings.TrimSpace(embedded))
	}
	return []byte(strings.ReplaceAll(string(e2eDefault(t)), embedded, slowHub))
}

// prometheusBinary is the prometheus on PATH; a missing one fails the test.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus is not installed (%v): run scripts/test.sh, which installs Debian's prometheus package", err)
	}
	return bin
}

// startPrometheus starts a Prometheus with the given configuration on a
// free loopback address, its data in a directory of its own.
func startPrometheus(ctx context.Context, t *testing.T, bin, name, cfg string, flags ...string) promAPI {
	t.Helper()
	return startPrometheusOn(ctx, t, bin, name, cfg, filepath.Join(t.TempDir(), "data"), flags...)
}

// startPrometheusOn is startPrometheus with its data in the directory data,
// which may hold blocks already.
func startPrometheusOn(ctx context.Context, t *testing.T, bin, name, cfg, data string, flags ...string) promAPI {
	t.Helper()
	configPath := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p, addr := startOnFreeAddress(ctx, t, func(addr string) *process {
		return startProcess(t, name, bin, append([]string{
			"--config.file=" + configPath,
			"--storage.tsdb.path=" + data,
			"--web.listen-address=" + addr,
			"--log.level=warn",
		}, flags...)...)
	}, "/-/ready")
	t.Cleanup(func() {
		if exited, err := p.stop(prometheusStopWait); !exited {
			t.Logf("%s did not exit within %s of SIGTERM (%v); killed", name, prometheusStopWait, err)
		}
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", name, p.logTail(30))
		}
	})
	return promAPI{base: "http://" + addr}
}

// eventually calls check until it returns nil or limit passes, and returns
// check's last error. Each check runs with the test's context, so that the
// error reported is the last real answer, not a cancelled request.
func eventually(ctx context.Context, limit time.Duration, check func(context.Context) error) error {
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("test budget spent: %w", err)
		case <-timeout.C:
			return fmt.Errorf("still failing after %s:\n%w", limit, err)
		case <-tick.C:
		}
	}
}

// waitForFirstRuns waits until Prometheus holds a few samples of the run
// result of every default scenario, then checks that every run succeeded.
func waitForFirstRuns(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	var want []string
	for _, s := range config.Default().Scenarios {
		want = append(want, s.Name)
	}
	err := eventually(ctx, firstRunsLimit, func(ctx context.Context) error {
		res, err := prom.query(ctx, "count_over_time(hubprobe_run_success[1m])")
		if err != nil {
			return err
		}
		scrapes := map[string]string{}
		for _, s := range res.Samples {
			scrapes[s.Metric["scenario"]] = s.value()
		}
		var missing []string
		for _, name := range want {
			if n, _ := strconv.Atoi(scrapes[name]); n < scrapesAfterRun {
				missing = append(missing, fmt.Sprintf("%s (%d samples)", name, n))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("hubprobe_run_success: want %d samples of every scenario, short: %s", scrapesAfterRun, strings.Join(missing, ", "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := prom.query(ctx, "hubprobe_run_success != 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Samples {
		t.Errorf("scenario %s: first run failed against the embedded hub (hubprobe_run_success = %s)", s.Metric["scenario"], s.value())
	}
}

// namedQuery is an expression to evaluate and where it comes from.
type namedQuery struct {
	source, expr string
}

// checkDashboardQueries evaluates every query of every dashboard that want
// picks and reports each one that fails or returns nothing.
func checkDashboardQueries(ctx context.Context, t *testing.T, prom promAPI, want func(expr string) bool) {
	t.Helper()
	queries, err := grafana.Queries()
	if err != nil {
		t.Fatal(err)
	}
	var named []namedQuery
	for _, q := range queries {
		if !want(q.Expr) {
			continue
		}
		named = append(named, namedQuery{fmt.Sprintf("dashboard %s, panel %q, query %s", q.Dashboard, q.Panel, q.RefID), q.Expr})
	}
	checkReturnData(ctx, t, prom, "dashboard queries", named)
}

// checkRecordingRulesReturnData queries every series the recording rules
// whose expression want picks write, each rule's labels included: with the
// default configuration every one of them but those of the Azure Monitor
// figures has data, the latency records from either histogram form.
func checkRecordingRulesReturnData(ctx context.Context, t *testing.T, prom promAPI, want func(expr string) bool) {
	t.Helper()
	var named []namedQuery
	for _, r := range alerts.Groups(alerts.DefaultConfig).Groups[0].Rules {
		if !want(r.Expr) {
			continue
		}
		var matchers []string
		for k, v := range r.Labels {
			matchers = append(matchers, fmt.Sprintf("%s=%q", k, v))
		}
		sort.Strings(matchers)
		expr := r.Record + "{" + strings.Join(matchers, ", ") + "}"
		named = append(named, namedQuery{"recording rule " + expr, expr})
	}
	checkReturnData(ctx, t, prom, "recording rules", named)
}

// checkDocumentedQueries runs the PromQL examples of docs/metrics.md and
// the README as they are written there; the README's first, the capacity
// query, answers only for a slow hub (waitForSlowMessageAlert runs it).
func checkDocumentedQueries(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	var named []namedQuery
	for i, block := range promqlBlocks(t, metricsPath) {
		named = append(named, namedQuery{fmt.Sprintf("%s, query %d", metricsPath, i+1), block})
	}
	for i, block := range promqlBlocks(t, readmePath)[1:] {
		named = append(named, namedQuery{fmt.Sprintf("%s, query %d", readmePath, i+2), block})
	}
	checkReturnData(ctx, t, prom, "queries of "+metricsPath, named)
}

// checkReturnData waits until every query returns data, then logs how many
// did; when the limit passes it reports how many did not, and which.
func checkReturnData(ctx context.Context, t *testing.T, prom promAPI, what string, queries []namedQuery) {
	t.Helper()
	if len(queries) == 0 {
		t.Fatalf("no %s to check", what)
	}
	failed := 0
	err := eventually(ctx, dataLimit, func(ctx context.Context) error {
		var failures []error
		for _, q := range queries {
			if err := nonEmpty(ctx, prom, q.expr); err != nil {
				failures = append(failures, fmt.Errorf("%s: %s\n    %w", q.source, q.expr, err))
			}
		}
		failed = len(failures)
		return errors.Join(failures...)
	})
	if err != nil {
		t.Errorf("%d of %d %s return no data: %v", failed, len(queries), what, err)
		return
	}
	t.Logf("%d of %d %s return data", len(queries), len(queries), what)
}

// checkLatencySeriesFound checks that HubprobeLatencySeriesMissing, which
// fires when no form of the latency histogram reaches the rules, finds
// nothing missing in this ingestion mode.
func checkLatencySeriesFound(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	rule, ok := alertRule(alerts.AlertLatencySeriesMissing)
	if !ok {
		t.Fatalf("package alerts has no alert %s; update this test", alerts.AlertLatencySeriesMissing)
	}
	res, err := prom.query(ctx, rule.Expr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Samples {
		t.Errorf("%s holds for scenario %s (%s messages received) although its latency is stored", rule.Alert, s.Metric["scenario"], s.value())
	}
}

// nonEmpty fails when expr errors or yields no series.
func nonEmpty(ctx context.Context, prom promAPI, expr string) error {
	res, err := prom.query(ctx, expr)
	if err != nil {
		return err
	}
	if len(res.Samples) == 0 {
		return fmt.Errorf("empty result: %s", res.Raw)
	}
	return nil
}

// checkRulesHealthy waits until every shipped rule has been evaluated a few
// times with data present and reports each rule that is not healthy.
func checkRulesHealthy(ctx context.Context, t *testing.T, prom promAPI, dataSince time.Time) {
	t.Helper()
	want := map[string]bool{}
	for _, g := range alerts.Groups(alerts.DefaultConfig).Groups {
		for _, r := range g.Rules {
			want[g.Name+"/"+r.Record+r.Alert] = true
		}
	}
	evaluatedAfter := dataSince.Add(evaluationsAfterData * time.Second)
	err := eventually(ctx, rulesLimit, func(ctx context.Context) error {
		groups, err := prom.rules(ctx)
		if err != nil {
			return err
		}
		var problems []error
		seen := map[string]bool{}
		for _, g := range groups {
			for _, r := range g.Rules {
				seen[g.Name+"/"+r.Name] = true
				if err := ruleProblem(r, evaluatedAfter); err != nil {
					problems = append(problems, fmt.Errorf("group %s, rule %s: %w", g.Name, r.Name, err))
				}
			}
		}
		for name := range want {
			if !seen[name] {
				problems = append(problems, fmt.Errorf("rule %s of package alerts is not loaded by Prometheus", name))
			}
		}
		return errors.Join(problems...)
	})
	if err != nil {
		t.Errorf("rules not healthy: %v", err)
		return
	}
	t.Logf("all %d rules evaluate with health ok", len(want))
}

func ruleProblem(r rule, evaluatedAfter time.Time) error {
	switch {
	case r.Health != "ok" || r.LastError != "":
		return fmt.Errorf("health %q, lastError %q\n    expr: %s", r.Health, r.LastError, r.Query)
	case r.LastEvaluation.Before(evaluatedAfter):
		return fmt.Errorf("last evaluated at %s, not yet evaluated with data", r.LastEvaluation.Format(time.RFC3339Nano))
	}
	return nil
}

// waitForSlowMessageAlert waits until the slowed hub shows as more than 1 %
// of messages over 1 s, both in the recording rule and in the README's
// hand-written PromQL, and then until the p99 alert is pending or firing.
func waitForSlowMessageAlert(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	for _, name := range []string{slowShareRecord, sendLagRecord} {
		if !recordingRuleExists(name) {
			t.Fatalf("package alerts has no recording rule %s; update this test", name)
		}
	}
	readme := promqlBlocks(t, readmePath)
	if len(readme) != 2 || !strings.HasSuffix(readme[0], "> 0.01") {
		t.Fatalf("%s has %d promql blocks, want the capacity query (> 0.01) first, then the burn rate", readmePath, len(readme))
	}
	deadline := time.Now().Add(slowAlertLimit)
	err := eventually(ctx, slowAlertLimit, func(ctx context.Context) error {
		if err := nonEmpty(ctx, prom, fmt.Sprintf("%s > %g", slowShareRecord, slowShareMax)); err != nil {
			return fmt.Errorf("%s > %g: %w", slowShareRecord, slowShareMax, err)
		}
		if err := nonEmpty(ctx, prom, readme[0]); err != nil {
			return fmt.Errorf("%s query %s: %w", readmePath, readme[0], err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("slowed hub did not show over the p99 objective: %v\nper scenario: %s", err, perScenario(ctx, prom, slowShareRecord, sendLagRecord))
	}
	err = eventually(ctx, time.Until(deadline), func(ctx context.Context) error {
		_, err := activeAlertScenarios(ctx, prom, alerts.AlertLatencyP99OverOneSecond)
		return err
	})
	figures := perScenario(ctx, prom, slowShareRecord, sendLagRecord)
	if err == nil {
		t.Logf("%s active; per scenario: %s", alerts.AlertLatencyP99OverOneSecond, figures)
		checkHubDominates(ctx, t, prom, deadline)
		return
	}
	if heldBack := latencyAlertHeldBack(ctx, prom); heldBack != nil {
		t.Fatalf("%v\n%v\nper scenario: %s", err, heldBack, figures)
	}
	t.Logf("%s stayed inactive, as the rules intend: every scenario over the objective has a probe too late on its "+
		"schedule (this machine is starved of CPU), and %s is active for each\nper scenario: %s",
		alerts.AlertLatencyP99OverOneSecond, alerts.AlertProbeSaturated, figures)
}

// slowHubSays is what the p99 alert's description says of a hub that holds
// every delivery past 1 s on loopback: its own time outweighs the network's
// round trip, from the recorded series.
const slowHubSays = "the hub dominates."

// checkHubDominates checks that every active p99 alert says the slowed hub
// dominates its latency.
func checkHubDominates(ctx context.Context, t *testing.T, prom promAPI, deadline time.Time) {
	t.Helper()
	// The description is rendered at each evaluation from the recorded
	// series; the hub's time of a run reaches them as its deliveries are
	// timed, so the first evaluations after the alert fires may still
	// weigh the faster messages before the slowdown. Wait for it, within
	// the alert's own deadline.
	err := eventually(ctx, max(time.Until(deadline), 5*time.Second), func(ctx context.Context) error {
		return hubDominates(ctx, prom)
	})
	if err != nil {
		t.Error(err)
	}
}

// hubDominates checks that every active p99 alert says the hub's time
// outweighs the network's, and that there is one.
func hubDominates(ctx context.Context, prom promAPI) error {
	all, err := prom.alerts(ctx)
	if err != nil {
		return err
	}
	said := 0
	for _, a := range all {
		if a.Labels["alertname"] != alerts.AlertLatencyP99OverOneSecond {
			continue
		}
		if d := a.Annotations["description"]; !strings.HasSuffix(d, slowHubSays) {
			return fmt.Errorf("%s for %s says %q, want it to end %q", alerts.AlertLatencyP99OverOneSecond, a.Labels["scenario"], d, slowHubSays)
		}
		said++
	}
	if said == 0 {
		return fmt.Errorf("no %s says where the time goes", alerts.AlertLatencyP99OverOneSecond)
	}
	return nil
}

// latencyAlertHeldBack explains a silent p99 alert. The alert is meant to
// stay silent for a scenario whose probe cannot keep its sending schedule;
// HubprobeProbeSaturated speaks for that scenario instead. It returns an
// error unless that is what happened for every scenario over the objective.
func latencyAlertHeldBack(ctx context.Context, prom promAPI) error {
	rule, ok := alertRule(alerts.AlertLatencyP99OverOneSecond)
	if !ok {
		return fmt.Errorf("package alerts has no alert %s", alerts.AlertLatencyP99OverOneSecond)
	}
	if err := nonEmpty(ctx, prom, rule.Expr); err == nil {
		return fmt.Errorf("the expression of %s holds but the alert is not active:\n%s", rule.Alert, rule.Expr)
	}
	over, err := prom.query(ctx, fmt.Sprintf("%s > %g", slowShareRecord, slowShareMax))
	if err != nil {
		return err
	}
	saturated, err := activeAlertScenarios(ctx, prom, alerts.AlertProbeSaturated)
	if err != nil {
		return fmt.Errorf("the probe is not saturated either: %w", err)
	}
	for _, s := range over.Samples {
		if key := s.Metric["target"] + "/" + s.Metric["scenario"]; !saturated[key] {
			return fmt.Errorf("scenario %s is over the objective, yet neither %s nor %s is active for it",
				key, alerts.AlertLatencyP99OverOneSecond, alerts.AlertProbeSaturated)
		}
	}
	return nil
}

func alertRule(name string) (alerts.Rule, bool) {
	i := slices.IndexFunc(alerts.Alerts(alerts.DefaultConfig), func(r alerts.Rule) bool { return r.Alert == name })
	if i < 0 {
		return alerts.Rule{}, false
	}
	return alerts.Alerts(alerts.DefaultConfig)[i], true
}

func recordingRuleExists(name string) bool {
	for _, g := range alerts.Groups(alerts.DefaultConfig).Groups {
		if slices.ContainsFunc(g.Rules, func(r alerts.Rule) bool { return r.Record == name }) {
			return true
		}
	}
	return false
}

// perScenario lists the value of each expression per scenario, to show why
// an alert is or is not active: for example a probe too starved of CPU to
// keep its schedule holds the latency alert back by design.
func perScenario(ctx context.Context, prom promAPI, exprs ...string) string {
	var out []string
	for _, expr := range exprs {
		res, err := prom.query(ctx, expr)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", expr, err))
			continue
		}
		var values []string
		for _, s := range res.Samples {
			values = append(values, s.Metric["scenario"]+"="+s.value())
		}
		sort.Strings(values)
		out = append(out, fmt.Sprintf("%s {%s}", expr, strings.Join(values, " ")))
	}
	return strings.Join(out, "; ")
}

// activeAlertScenarios returns the target/scenario pairs for which the
// named alert is pending or firing, or an error when there are none.
func activeAlertScenarios(ctx context.Context, prom promAPI, name string) (map[string]bool, error) {
	all, err := prom.alerts(ctx)
	if err != nil {
		return nil, err
	}
	active := map[string]bool{}
	var states []string
	for _, a := range all {
		if a.Labels["alertname"] != name {
			continue
		}
		states = append(states, a.State)
		if a.State == "pending" || a.State == "firing" {
			active[a.Labels["target"]+"/"+a.Labels["scenario"]] = true
		}
	}
	if len(active) == 0 {
		return nil, fmt.Errorf("alert %s is not pending or firing (states seen: %v)", name, states)
	}
	return active, nil
}
