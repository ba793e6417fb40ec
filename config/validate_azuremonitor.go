package config

import (
	"slices"
	"strings"

	"github.com/hubprobe/hubprobe/azure/monitor"
)

// azureMonitor checks a target's azure_monitor: a SignalR or Web PubSub
// resource id of the target's own service, an https Resource Manager
// endpoint, and one of Azure Monitor's time grains. The embedded hub
// reports its own server load, and has no Azure resource.
func (v *validator) azureMonitor(item string, t *Target) error {
	a := t.AzureMonitor
	if a == nil {
		return nil
	}
	key := keyPath(item, "azure_monitor")
	if t.Embedded {
		return v.Errorf(key, "not allowed with embedded: true (the embedded hub reports its own server load)")
	}
	if a.ResourceID == "" {
		return v.Errorf(key, "resource_id is required")
	}
	id, err := monitor.ParseResourceID(a.ResourceID)
	if err != nil {
		return v.Errorf(keyPath(key, "resource_id"), "%s", err)
	}
	if id.Service() != t.TierService() {
		return v.Errorf(keyPath(key, "resource_id"), "names a Microsoft.SignalRService/%s resource, but target %q has service: %s", id.Type, t.Name, t.Service)
	}
	if err := monitor.CheckEndpoint(a.Endpoint); err != nil {
		return v.Errorf(keyPath(key, "endpoint"), "%s", err)
	}
	a.Endpoint = strings.TrimRight(a.Endpoint, "/")
	if !slices.Contains(AzureMonitorIntervals, a.Interval) {
		return v.Errorf(keyPath(key, "interval"), "must be one of Azure Monitor's time grains %s, got %s", grainList(), a.Interval)
	}
	return nil
}

// grainList writes AzureMonitorIntervals as "1m, 5m, 15m, 30m or 1h".
func grainList() string {
	names := make([]string, len(AzureMonitorIntervals))
	for i, d := range AzureMonitorIntervals {
		name := d.String() // 1h0m0s, 30m0s
		if strings.HasSuffix(name, "m0s") {
			name = strings.TrimSuffix(name, "0s")
		}
		if strings.HasSuffix(name, "h0m") {
			name = strings.TrimSuffix(name, "0m")
		}
		names[i] = name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
