package alerts

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// amtool runs Debian's amtool (prometheus-alertmanager), which
// scripts/test.sh installs; a missing one fails the test.
func amtool(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("amtool")
	if err != nil {
		t.Fatal("amtool is not on PATH: install Debian's prometheus-alertmanager package, as scripts/test.sh does")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("amtool %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// The shipped Alertmanager configuration, and the same inside the Helm
// values, pass Alertmanager's own check with every route, inhibition and
// receiver found.
func TestAlertmanagerConfigPassesAmtool(t *testing.T) {
	var values struct {
		Alertmanager struct {
			Config yaml.Node `yaml:"config"`
		} `yaml:"alertmanager"`
	}
	readYAML(t, AlertmanagerValuesPath, &values)
	fromValues, err := yaml.Marshal(&values.Alertmanager.Config)
	if err != nil {
		t.Fatal(err)
	}
	extracted := filepath.Join(t.TempDir(), "from-values.yml")
	if err := os.WriteFile(extracted, fromValues, 0o600); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?s)SUCCESS.*- route\n - 7 inhibit rules\n - 2 receivers`)
	for _, path := range []string{filepath.Join(repoRoot, AlertmanagerConfigPath), extracted} {
		if out := amtool(t, "check-config", path); !want.MatchString(out) {
			t.Errorf("amtool check-config %s did not find the route, 7 inhibit rules and 2 receivers:\n%s", path, out)
		}
	}
	var shipped, inValues any
	readYAML(t, AlertmanagerConfigPath, &shipped)
	if err := yaml.Unmarshal(fromValues, &inValues); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shipped, inValues) {
		t.Errorf("alertmanager.config of %s differs from %s", AlertmanagerValuesPath, AlertmanagerConfigPath)
	}
}

// amtool's routing test: each severity the rules use reaches the receiver
// meant for it, grouped by target.
func TestAlertmanagerRoutesEverySeverity(t *testing.T) {
	path := filepath.Join(repoRoot, AlertmanagerConfigPath)
	for severity, receiver := range map[string]string{
		SeverityPage: PageReceiver, SeverityCritical: PageReceiver,
		SeverityTicket: TicketReceiver, SeverityWarning: TicketReceiver,
	} {
		out := amtool(t, "config", "routes", "test", "--config.file="+path, "--verify.receivers="+receiver,
			"alertname="+AlertErrorBudgetBurn, "severity="+severity, "target=hub", "scenario=echo")
		if strings.TrimSpace(out) != receiver {
			t.Errorf("severity %s goes to %q, want %s", severity, strings.TrimSpace(out), receiver)
		}
	}
	used := map[string]bool{}
	for _, r := range Alerts(DefaultConfig) {
		used[r.Labels["severity"]] = true
	}
	for s := range used {
		if !slices.Contains([]string{SeverityPage, SeverityCritical, SeverityTicket, SeverityWarning}, s) {
			t.Errorf("the rules use severity %q, which no route of the example names", s)
		}
	}
}

// Every inhibition names alerts the rules have, and its equal labels are
// ones both sides carry.
func TestInhibitionsNameRealAlerts(t *testing.T) {
	names := map[string]bool{}
	for _, r := range Alerts(DefaultConfig) {
		names[r.Alert] = true
	}
	alertnames := regexp.MustCompile(`^alertname=~"(.*)"$`)
	for i, rule := range Inhibitions() {
		for _, m := range append(slices.Clone(rule.SourceMatchers), rule.TargetMatchers...) {
			sub := alertnames.FindStringSubmatch(m)
			if sub == nil {
				continue
			}
			for _, n := range strings.Split(sub[1], "|") {
				if !names[n] {
					t.Errorf("inhibit rule %d names %s, which is not an alert of the rules", i, n)
				}
			}
		}
		if len(rule.Equal) == 0 || rule.Equal[0] != "target" {
			t.Errorf("inhibit rule %d is not limited to the same target: equal %v", i, rule.Equal)
		}
	}
}

// The end-to-end test's settings change the receivers and timings only.
func TestAlertmanagerSettingsChangeOnlyReceiversAndTimings(t *testing.T) {
	s := AlertmanagerSettings{PageURL: "http://127.0.0.1:1/page", TicketURL: "http://127.0.0.1:1/ticket", GroupWait: "1s", GroupInterval: "2s", RepeatInterval: "1h"}
	got, def := Alertmanager(s), Alertmanager(DefaultAlertmanagerSettings)
	if got.Receivers[0].WebhookConfigs[0].URL != s.PageURL || got.Receivers[1].WebhookConfigs[0].URL != s.TicketURL ||
		got.Route.GroupWait != "1s" || got.Route.GroupInterval != "2s" || got.Route.RepeatInterval != "1h" {
		t.Errorf("settings %+v not applied: %+v", s, got)
	}
	if !reflect.DeepEqual(got.InhibitRules, def.InhibitRules) || !reflect.DeepEqual(got.Route.Routes, def.Route.Routes) {
		t.Error("the settings changed the routes or inhibitions")
	}
	if !bytes.Contains(must(yaml.Marshal(got)), []byte("send_resolved: true")) {
		t.Error("receivers do not ask for resolved notices")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
