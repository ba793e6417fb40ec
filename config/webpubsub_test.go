package config

import (
	"strings"
	"testing"
)

const embeddedWebPubSub = `
targets:
  - name: wps
    service: webpubsub
    embedded: true
scenarios:
  - name: echo
    kind: echo
  - name: groups
    kind: send_to_group
    protocol: json.reliable.webpubsub.azure.v1
`

// An embedded Web PubSub target needs no setup: its hub name is filled in
// (and its access key left to the embedded hub, which makes one up), and
// its scenarios speak the plain subprotocol unless they name the reliable
// one.
func TestEmbeddedWebPubSubDefaults(t *testing.T) {
	c, err := Parse([]byte(embeddedWebPubSub), "wps.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets[0]
	if !tg.WebPubSub() || tg.Hub != EmbeddedWebPubSubHub || tg.Mode != "" || tg.Serverless() || tg.EmbeddedHub.AccessKey != "" {
		t.Errorf("target = service %q, hub %q, mode %q, key set %v; want webpubsub, %q, no mode, no key",
			tg.Service, tg.Hub, tg.Mode, tg.EmbeddedHub.AccessKey != "", EmbeddedWebPubSubHub)
	}
	if got := c.Scenarios[0].Protocol; got != "json.webpubsub.azure.v1" {
		t.Errorf("default protocol = %q, want json.webpubsub.azure.v1", got)
	}
	if got := c.Scenarios[1].Protocol; got != "json.reliable.webpubsub.azure.v1" {
		t.Errorf("written protocol = %q, want the reliable subprotocol", got)
	}
}

// A key written in the file is kept.
func TestEmbeddedWebPubSubWrittenKey(t *testing.T) {
	body := strings.Replace(embeddedWebPubSub, "embedded: true", "embedded: true\n    embedded_hub: {access_key: s3cret-k3y}", 1)
	c, err := Parse([]byte(body), "wps.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.Targets[0].EmbeddedHub.AccessKey); got != "s3cret-k3y" {
		t.Errorf("access key = %q, want the written one", got)
	}
}
