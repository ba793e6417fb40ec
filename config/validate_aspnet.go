package config

import (
	"slices"
	"strings"
)

// aspNetTarget checks what a classic ASP.NET SignalR target may hold. It
// is reached through its app server's url (or the embedded hub), which
// redirects to Azure SignalR Service in ASP.NET mode when the server
// uses it: there is no serverless mode, so no connection string.
func (v *validator) aspNetTarget(item string, t *Target) error {
	for _, k := range []string{"connection_string", "connection_string_file"} {
		if v.Has(keyPath(item, k)) {
			return v.Errorf(keyPath(item, k), "not allowed with service: %s; give the app server's url, or embedded: true", ServiceAspNetSignalR)
		}
	}
	if v.Has(keyPath(item, "skip_negotiation")) {
		return v.Errorf(keyPath(item, "skip_negotiation"), "not allowed with service: %s, whose connections need negotiate's connection token", ServiceAspNetSignalR)
	}
	if t.Mode == "" {
		t.Mode = TargetModeDefault
	}
	if t.Mode != TargetModeDefault {
		return v.Errorf(keyPath(item, "mode"), "must be %s with service: %s, which has no serverless mode, got %q", TargetModeDefault, ServiceAspNetSignalR, t.Mode)
	}
	switch {
	case t.Hub == "":
		t.Hub = AspNetHubName
	case !validHubName(t.Hub):
		return v.Errorf(keyPath(item, "hub"), "invalid hub name %q: use a letter, then letters, digits or \"_\"", t.Hub)
	}
	return v.onlyServerless(item, "rest_api_version")
}

// aspNetWire checks a classic scenario's transport and fallbacks, each
// written in hubprobe's spelling or the classic client's (AspNetTransportNames),
// and stores hubprobe's; the classic protocol is JSON only.
func (v *validator) aspNetWire(item string, s *Scenario) error {
	if err := v.aspNetTransport(keyPath(item, "transport"), &s.Transport); err != nil {
		return err
	}
	for i := range s.FallbackTransports {
		if err := v.aspNetTransport(indexPath(keyPath(item, "fallback_transports"), i), &s.FallbackTransports[i]); err != nil {
			return err
		}
	}
	return v.oneOf(keyPath(item, "protocol"), "protocol", s.Protocol, []string{"json"})
}

func (v *validator) aspNetTransport(key string, name *string) error {
	if canonical, ok := AspNetTransportNames[*name]; ok {
		*name = canonical
		return nil
	}
	if slices.Contains(AspNetTransports, *name) {
		return nil
	}
	names := slices.Concat(AspNetTransports, sortedKeys(AspNetTransportNames))
	return v.Errorf(key, "unknown transport %q (valid: %s)", *name, strings.Join(slices.Sorted(slices.Values(names)), ", "))
}
