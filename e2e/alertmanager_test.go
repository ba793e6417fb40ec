package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/alerts"
)

// The Alertmanager test normally takes about a minute: the burn alert
// fires within about 10 s of the slowdown and resolves within about 15 s
// of the healing.
const (
	alertmanagerBudget = 3 * time.Minute
	pageLimit          = 60 * time.Second
	quietAfterResolved = 3 * time.Second
)

// pageConfig is a lean hubprobe configuration: one echo on the embedded
// hub, sending most of the time, so that every window of the test's burn
// rates holds deliveries.
const pageConfig = `global:
  start_jitter: false
targets:
  - name: hub
    embedded: true
scenarios:
  - name: echo
    target: hub
    kind: echo
    schedule: "@every 3s"
    duration: 2s
    timeout: 3s
    connections: 2
    send_interval: 100ms
    loss_timeout: 1s
`

// testBurnRate is the fastest page's pair at the test's pace: 14.4× over
// 30 s and 10 s, firing after a second. The windows are short so that the
// page comes and goes within seconds; the promtool tests hold the real
// pairs to their thresholds.
var testBurnRate = alerts.BurnRate{Severity: alerts.SeverityPage, Factor: 14.4, Long: "30s", Short: "10s", For: "1s"}

// notification is what Alertmanager's webhook receiver posts.
type notification struct {
	Status      string            `json:"status"`
	Receiver    string            `json:"receiver"`
	GroupLabels map[string]string `json:"groupLabels"`
	Alerts      []struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"alerts"`
}

// webhook records every notification by the path it was posted to.
type webhook struct {
	mu   sync.Mutex
	got  map[string][]notification
	errs []error
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var n notification
	err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&n)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("%s: %w", r.URL.Path, err))
	}
	w.got[r.URL.Path] = append(w.got[r.URL.Path], n)
}

func (w *webhook) notifications(path string) []notification {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]notification(nil), w.got[path]...)
}

// pager is one Prometheus with its own Alertmanager, whose page and ticket
// receivers post to the webhook under their version's prefix.
type pager struct {
	name string
	prom promAPI
	page string // the page receiver's path
}

// TestAlertmanagerPagesOnceAndResolves runs the built daemon under
// Prometheus 2.x and 3.x, each with the shipped rules (the burn rate at the
// test's pace) and Debian's Alertmanager with the shipped routes and
// inhibitions. A hub slowed past 1 s must bring the page receiver exactly
// one notification for the target's group, carrying the runbook URL and the
// verdict that the hub dominates, and once the hub heals, the resolved
// notice.
func TestAlertmanagerPagesOnceAndResolves(t *testing.T) {
	bins := prometheusBins(t)
	amBin := alertmanagerBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), alertmanagerBudget)
	defer cancel()
	start := time.Now()
	hook := &webhook{got: map[string][]notification{}}
	server := httptest.NewServer(hook)
	defer server.Close()
	rules := writeTestRules(t)
	hp := startHubprobeWith(ctx, t, repoRoot(t), []byte(pageConfig), nil)
	var pagers []pager
	for _, v := range []struct{ name, bin string }{{"2.x", bins.v2}, {"3.x", bins.v3}} {
		am := startAlertmanager(ctx, t, amBin, v.name, server.URL+"/"+v.name)
		cfg := prometheusConfig(rules, scrapeJob("hubprobe", []string{hp.addr})) + alertingConfig(am)
		pagers = append(pagers, pager{name: v.name, prom: startPrometheus(ctx, t, v.bin, "prometheus-pager-"+v.name, cfg), page: "/" + v.name + "/page"})
	}
	for _, p := range pagers {
		waitHealthy(ctx, t, p)
	}
	t.Logf("hub healthy in both after %s", since(start))
	hp.reloadWith(ctx, t, []byte(strings.Replace(pageConfig, "    embedded: true\n", slowHub, 1)))
	for _, p := range pagers {
		checkPaged(ctx, t, hook, p)
	}
	t.Logf("paged after %s", since(start))
	hp.reloadWith(ctx, t, []byte(pageConfig))
	for _, p := range pagers {
		checkResolved(ctx, t, hook, p)
	}
	t.Logf("resolved after %s", since(start))
	hook.mu.Lock()
	defer hook.mu.Unlock()
	for _, err := range hook.errs {
		t.Error(err)
	}
}

// writeTestRules renders the shipped rules with testBurnRate as their only
// burn-rate pair.
func writeTestRules(t *testing.T) string {
	t.Helper()
	cfg := alerts.DefaultConfig
	cfg.BurnRates = []alerts.BurnRate{testBurnRate}
	files, err := alerts.Files(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, files[alerts.RulesFilePath], 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// alertmanagerBinary is Debian's prometheus-alertmanager on PATH.
func alertmanagerBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		t.Fatalf("prometheus-alertmanager is not installed (%v): run scripts/test.sh, which installs Debian's package", err)
	}
	return bin
}

// startAlertmanager starts Alertmanager on the shipped routes and
// inhibitions, its receivers posting to webhook/page and webhook/ticket,
// with the test's short waits; it returns its address. Clustering is off,
// so that two of them do not gossip.
func startAlertmanager(ctx context.Context, t *testing.T, bin, name, webhook string) string {
	t.Helper()
	cfg, err := yaml.Marshal(alerts.Alertmanager(alerts.AlertmanagerSettings{
		PageURL: webhook + "/page", TicketURL: webhook + "/ticket",
		GroupWait: "2s", GroupInterval: "3s", RepeatInterval: "1h",
	}))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	storage := t.TempDir()
	p, addr := startOnFreeAddress(ctx, t, func(addr string) *process {
		return startProcess(t, "alertmanager-"+name, bin, "--config.file="+path, "--storage.path="+storage,
			"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	}, "/-/ready")
	t.Cleanup(func() {
		if exited, err := p.stop(prometheusStopWait); !exited {
			t.Logf("alertmanager %s did not exit within %s of SIGTERM (%v); killed", name, prometheusStopWait, err)
		}
		if t.Failed() {
			t.Logf("alertmanager %s log (last lines):\n%s", name, p.logTail(30))
		}
	})
	return addr
}

// alertingConfig sends a Prometheus' alerts to one Alertmanager.
func alertingConfig(amAddr string) string {
	return fmt.Sprintf("alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", amAddr)
}

// waitHealthy waits until the burn rate's short window holds deliveries of
// the healthy hub, none of them bad, and checks nothing paged meanwhile.
func waitHealthy(ctx context.Context, t *testing.T, p pager) {
	t.Helper()
	expr := alerts.ErrorRatioRecord(testBurnRate.Short) + " == 0"
	if err := eventually(ctx, firstRunsLimit, func(ctx context.Context) error { return nonEmpty(ctx, p.prom, expr) }); err != nil {
		t.Fatalf("%s: the healthy hub's error ratio: %v", p.name, err)
	}
}

// checkPaged waits for the page, then checks it came once, for the target's
// group, with the runbook URL and the verdict.
func checkPaged(ctx context.Context, t *testing.T, hook *webhook, p pager) {
	t.Helper()
	err := eventually(ctx, pageLimit, func(context.Context) error {
		if len(hook.notifications(p.page)) == 0 {
			return fmt.Errorf("%s: no notification on %s", p.name, p.page)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\nerror ratios: %s", err, perScenario(ctx, p.prom, alerts.ErrorRatioRecord(testBurnRate.Long), alerts.ErrorRatioRecord(testBurnRate.Short)))
	}
	n := hook.notifications(p.page)[0]
	if n.Status != "firing" || n.Receiver != alerts.PageReceiver || len(n.GroupLabels) != 1 || n.GroupLabels["target"] != "hub" {
		t.Errorf("%s: first notification is %s to %s for group %v, want firing to %s for target hub", p.name, n.Status, n.Receiver, n.GroupLabels, alerts.PageReceiver)
	}
	for _, a := range n.Alerts {
		if a.Labels["alertname"] != alerts.AlertErrorBudgetBurn || a.Labels["severity"] != alerts.SeverityPage || a.Labels["scenario"] != "echo" {
			t.Errorf("%s: the page carries %v, want only %s of echo", p.name, a.Labels, alerts.AlertErrorBudgetBurn)
		}
		if url := a.Annotations["runbook_url"]; url != alerts.DefaultConfig.RunbookBase+"#hubprobeerrorbudgetburn" {
			t.Errorf("%s: runbook_url %q", p.name, url)
		}
		if d := a.Annotations["description"]; !strings.HasSuffix(d, slowHubSays) {
			t.Errorf("%s: the page's description does not end %q: %s", p.name, slowHubSays, d)
		}
	}
}

// checkResolved waits for the resolved notice of the group, then checks
// that it followed exactly one firing notification and that nothing came
// after it.
func checkResolved(ctx context.Context, t *testing.T, hook *webhook, p pager) {
	t.Helper()
	resolved := func() int {
		for i, n := range hook.notifications(p.page) {
			if n.Status == "resolved" {
				return i
			}
		}
		return -1
	}
	err := eventually(ctx, pageLimit, func(context.Context) error {
		if resolved() < 0 {
			return fmt.Errorf("%s: no resolved notice on %s", p.name, p.page)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\nerror ratio: %s", err, perScenario(ctx, p.prom, alerts.ErrorRatioRecord(testBurnRate.Short)))
	}
	time.Sleep(quietAfterResolved)
	all := hook.notifications(p.page)
	if i := resolved(); i != 1 || len(all) != 2 {
		t.Errorf("%s: %d notifications on %s, the resolved one at %d; want one firing, then the resolved one: %+v", p.name, len(all), p.page, i, all)
	}
	for _, a := range all[len(all)-1].Alerts {
		if a.Status != "resolved" || a.Labels["target"] != "hub" {
			t.Errorf("%s: the resolved notice carries %s %v", p.name, a.Status, a.Labels)
		}
	}
}
