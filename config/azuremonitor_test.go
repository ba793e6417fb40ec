package config

import (
	"testing"
	"time"
)

const webPubSubWithMonitor = `
targets:
  - name: wps
    service: webpubsub
    connection_string: "Endpoint=https://probe.webpubsub.azure.com;AccessKey=k;Version=1.0;"
    hub: probe
    azure_monitor:
      resource_id: /subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/probe
scenarios:
  - name: groups
    kind: send_to_group
`

// resource_id alone reads the public cloud's Resource Manager once a
// minute.
func TestAzureMonitorDefaults(t *testing.T) {
	c, err := Parse([]byte(webPubSubWithMonitor), "wps.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Targets[0].AzureMonitor
	want := AzureMonitor{
		ResourceID: "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/probe",
		Endpoint:   "https://management.azure.com", Interval: time.Minute,
	}
	if got == nil || *got != want {
		t.Errorf("azure_monitor %+v, want %+v", got, want)
	}
}
