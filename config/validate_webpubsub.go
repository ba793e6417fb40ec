package config

import (
	"slices"
	"strings"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// service fills and checks a target's service.
func (v *validator) service(item string, t *Target) error {
	if t.Service == "" {
		t.Service = ServiceSignalR
	}
	return v.oneOf(keyPath(item, "service"), "service", t.Service, Services)
}

// webPubSubTarget checks what a Web PubSub target may hold. It is reached
// through its connection string (or the embedded hub's access key): the
// client URL, the client tokens and the REST calls all come from it, so
// the SignalR ways of reaching a hub do not apply.
func (v *validator) webPubSubTarget(item string, t *Target, cs bool) error {
	if v.Has(keyPath(item, "mode")) {
		return v.Errorf(keyPath(item, "mode"), "not allowed with service: %s, which has no modes", ServiceWebPubSub)
	}
	for _, k := range []string{"access_token", "access_token_file", "skip_negotiation", "rest_api_version"} {
		if v.Has(keyPath(item, k)) {
			return v.Errorf(keyPath(item, k), "not allowed with service: %s (hubprobe mints the tokens from the connection string)", ServiceWebPubSub)
		}
	}
	for name := range t.Headers {
		if strings.EqualFold(name, "Authorization") {
			return v.Errorf(keyPath(keyPath(item, "headers"), name), "not allowed with service: %s (hubprobe mints the client tokens)", ServiceWebPubSub)
		}
	}
	switch {
	case t.Hub == "" && cs:
		return v.Errorf(item, "hub is required with connection_string")
	case t.Hub == "":
		t.Hub = EmbeddedWebPubSubHub
	case !webpubsub.ValidHub(t.Hub):
		return v.Errorf(keyPath(item, "hub"), "invalid hub name %q: use a letter, then letters, digits or any of _`,.[]", t.Hub)
	}
	return nil
}

// scenarioWire checks kind, transport and protocol against the wire of the
// target's service. A Web PubSub scenario speaks one of the JSON
// subprotocols over WebSockets; its protocol defaults to the plain one.
func (v *validator) scenarioWire(item string, s *Scenario, c *Config) error {
	t, ok := c.Target(s.Target)
	if !ok {
		return nil // scenarioTarget reports it
	}
	if err := v.kindOnService(item, s, t); err != nil {
		return err
	}
	if t.AspNet() {
		return v.aspNetWire(item, s)
	}
	if !t.WebPubSub() {
		return firstError(
			v.oneOf(keyPath(item, "transport"), "transport", s.Transport, Transports),
			v.oneOf(keyPath(item, "protocol"), "protocol", s.Protocol, Protocols),
			v.transports(item, s),
		)
	}
	if !v.Has(keyPath(item, "protocol")) {
		s.Protocol = webpubsub.ProtocolJSON
	}
	if v.Has(keyPath(item, "fallback_transports")) {
		return v.Errorf(keyPath(item, "fallback_transports"), "not allowed with service: %s, which clients reach over websockets only", ServiceWebPubSub)
	}
	return firstError(
		v.oneOf(keyPath(item, "transport"), "transport", s.Transport, []string{"websockets"}),
		v.oneOf(keyPath(item, "protocol"), "subprotocol", s.Protocol, WebPubSubProtocols),
	)
}

// kindOnService refuses a kind that has no form on the target's service.
func (v *validator) kindOnService(item string, s *Scenario, t *Target) error {
	if v.kinds.runsOn(s.Kind, t.Service) || !slices.Contains(v.kinds.names(), s.Kind) {
		return nil // an unknown kind is reported by the kind check
	}
	return v.Errorf(keyPath(item, "kind"), "%q does not run on target %q (service: %s); its kinds: %s",
		s.Kind, t.Name, t.Service, strings.Join(v.kinds.forService(t.Service), ", "))
}
