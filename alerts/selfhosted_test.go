package alerts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Bindings with every kind of value a Helm user may write render rules
// promtool accepts, one per target, each labelled with its target.
func TestSelfHostedGroupRendersValidRules(t *testing.T) {
	bindings := []SelfHostedBinding{
		ExampleSelfHostedBinding,
		{Target: "chat.eu-west_1", Namespace: "chat", Pod: `chat-(api|ws)-[0-9a-f]+-\w{5}`, Container: "server"},
		{Target: "quoted", Namespace: "q", Pod: `a"b\.c`},
	}
	group, err := DefaultConfig.SelfHostedGroup(bindings)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(RuleGroups{Groups: []RuleGroup{group}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "self-hosted.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := runPromtool(t, "check", "rules", path); !strings.Contains(out, "SUCCESS: 3 rules found") {
		t.Errorf("promtool check rules did not find 3 rules:\n%s", out)
	}
	for i, r := range group.Rules {
		if r.Record != ServerLoadRecord || r.Labels["target"] != bindings[i].Target {
			t.Errorf("rule %d records %s with labels %v, want %s{target=%q}", i, r.Record, r.Labels, ServerLoadRecord, bindings[i].Target)
		}
	}
	if want := `container=~"server"`; !strings.Contains(group.Rules[1].Expr, want) {
		t.Errorf("the second binding's rule does not select %s:\n%s", want, group.Rules[1].Expr)
	}
}

func TestSelfHostedGroupRejectsBadBindings(t *testing.T) {
	for want, bindings := range map[string][]SelfHostedBinding{
		"must not be empty":           {{Target: "app", Namespace: "web"}},
		`target "app" is bound twice`: {ExampleSelfHostedBinding, {Target: "app", Namespace: "other", Pod: "x"}},
		"missing closing )":           {{Target: "app", Namespace: "web", Pod: "app-(x"}},
		"invalid character class":     {{Target: "app", Namespace: "web", Pod: "app", Container: "[z-a]"}},
	} {
		_, err := DefaultConfig.SelfHostedGroup(bindings)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one saying %q", bindings, err, want)
		}
	}
}
