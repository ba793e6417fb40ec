package alerts

import "fmt"

// AlertConnectionDrops warns when held connections drop unusually often.
const AlertConnectionDrops = "HubprobeConnectionDrops"

// dropsAlert fires when the connections of a held scenario dropped more
// than DropsPerConnectionMax times each over DropWindow. A connection held
// as users' are drops a few times a day at most (a load balancer's reload,
// a deployment): more than once an hour on average is a fault of the path
// or the service, not a life event. Runs open fresh connections for a few
// seconds, so their drops are the failures HubprobeConnectionFailures
// already counts: the alert reads held scenarios alone.
func (cfg Config) dropsAlert() alert {
	drops := cfg.selector("hubprobe_connection_drops_total")
	return alert{
		name: AlertConnectionDrops, severity: SeverityWarning, forDuration: "15m",
		expr: fmt.Sprintf("%s (increase(%s[%s]))\n/ on (target, scenario)\n  max by (target, scenario) (%s > 0)\n> %g\n"+
			"and on (target, scenario)\n  max by (target, scenario) (%s)",
			byTargetScenario, drops, cfg.DropWindow, cfg.selector("hubprobe_run_connections"), cfg.DropsPerConnectionMax,
			cfg.selector("hubprobe_scenario_info", `kind="held"`)),
		summary: "Held connections to the hub drop unusually often.",
		description: fmt.Sprintf("The held connections of scenario {{ $labels.scenario }} on target {{ $labels.target }} "+
			"dropped {{ $value | humanize }} times each over the last %s; connections that live as users' do drop "+
			"a few times a day at most. The dashboard's Drops and reconnects row says why, beside the service's own closes.",
			cfg.DropWindow),
	}
}
