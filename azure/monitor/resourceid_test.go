package monitor

import (
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/tiers"
)

const sub = "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-probe.1/providers/"

func TestParseResourceID(t *testing.T) {
	good := []struct {
		id, service, name, replica string
	}{
		{sub + "Microsoft.SignalRService/SignalR/probe-west", tiers.SignalR, "probe-west", ""},
		{sub + "Microsoft.SignalRService/WebPubSub/pubsub1", tiers.WebPubSub, "pubsub1", ""},
		{sub + "Microsoft.SignalRService/SignalR/probe-west/replicas/probe-east", tiers.SignalR, "probe-west", "probe-east"},
		{strings.ToLower(sub) + "microsoft.signalrservice/webpubsub/pubsub1/REPLICAS/eu2", tiers.WebPubSub, "pubsub1", "eu2"},
	}
	for _, c := range good {
		r, err := ParseResourceID(c.id)
		if err != nil || r.Service() != c.service || r.Name != c.name || r.Replica != c.replica || r.String() != c.id {
			t.Errorf("ParseResourceID(%q) = %+v, %v", c.id, r, err)
		}
	}
}

func TestParseResourceIDErrors(t *testing.T) {
	bad := map[string]string{
		"probe-west": "must look like /subscriptions/{id}/resourceGroups/{group}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}[/replicas/{replica}], got \"probe-west\"",
		sub + "Microsoft.SignalRService/SignalR/probe-west/":                                           "must look like",
		sub + "Microsoft.Web/sites/probe-west":                                                         `provider must be Microsoft.SignalRService, got "Microsoft.Web"`,
		sub + "Microsoft.SignalRService/Redis/probe-west":                                              `resource type must be SignalR or WebPubSub, got "Redis"`,
		"/subscriptions/not-a-guid/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/probe": `subscription id "not-a-guid" is not a GUID`,
		strings.Replace(sub, "resourceGroups", "groups", 1) + "Microsoft.SignalRService/SignalR/probe": `segment 3 must be "resourceGroups", got "groups"`,
		strings.Replace(sub, "rg-probe.1", "rg.", 1) + "Microsoft.SignalRService/SignalR/probe":        `resource group "rg." is not a valid name`,
		sub + "Microsoft.SignalRService/SignalR/-probe":                                                `resource name "-probe" is not a valid name`,
		sub + "Microsoft.SignalRService/SignalR/probe/copies/eu2":                                      `segment 9 must be "replicas", got "copies"`,
		sub + "Microsoft.SignalRService/SignalR/probe/replicas/x":                                      `replica name "x" is not a valid name`,
		sub + "Microsoft.SignalRService/SignalR/probe?api-version=2024-1":                              `resource name "probe?api-version=2024-1" is not a valid name`,
	}
	for id, want := range bad {
		if _, err := ParseResourceID(id); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseResourceID(%q) = %v, want %q", id, err, want)
		}
	}
}

func TestAudienceOfKnownAndOtherEndpoints(t *testing.T) {
	for endpoint, want := range map[string]string{
		DefaultEndpoint:                          "https://management.core.windows.net/",
		"https://management.azure.com/":          "https://management.core.windows.net/",
		"https://management.chinacloudapi.cn":    "https://management.core.chinacloudapi.cn/",
		"https://management.usgovcloudapi.net":   "https://management.core.usgovcloudapi.net/",
		"https://management.local.azurestack.ex": "https://management.local.azurestack.ex",
	} {
		if got := Audience(endpoint); got != want {
			t.Errorf("Audience(%s) = %s, want %s", endpoint, got, want)
		}
	}
}

func TestCheckEndpoint(t *testing.T) {
	for endpoint, want := range map[string]string{
		DefaultEndpoint:                       "",
		"https://127.0.0.1:8443/":             "",
		"http://management.azure.com":         `must be an https URL, got scheme "http"`,
		"https://":                            "has no host",
		"https://management.azure.com/subs":   "must be the endpoint alone",
		"https://user@management.azure.com":   "must be the endpoint alone",
		"https://management.azure.com?x=1":    "must be the endpoint alone",
		"https://management.azure.com:port/x": "invalid URL: ",
	} {
		err := CheckEndpoint(endpoint)
		if want == "" && err != nil || want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)) {
			t.Errorf("CheckEndpoint(%q) = %v, want %q", endpoint, err, want)
		}
	}
}
