package tiers

import (
	"encoding/json"
	"testing"
)

// Each resource is the limit TierLimits carries under the same name, and
// there is one for every limit the tier holds.
func TestByResourceNamesTheLimits(t *testing.T) {
	l, err := Limits(SignalR, 10)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	resources := l.ByResource()
	if len(resources) != 5 {
		t.Errorf("%d resources, want connections, and messages and bytes per second both ways", len(resources))
	}
	for resource, v := range resources {
		if f, ok := fields[resource].(float64); !ok || int64(f) != v {
			t.Errorf("%s = %d, want TierLimits' %s, %v", resource, v, resource, fields[resource])
		}
	}
}
