package config

import (
	"strings"
)

// targetMode fills and checks mode, hub and rest_api_version. Serverless
// mode needs something to mint tokens with: a connection string, or an
// embedded hub with an access key. A connection string is only good for
// serverless mode: default mode is reached through the app server's url.
func (v *validator) targetMode(item string, t *Target) error {
	key := keyPath(item, "mode")
	cs := t.ConnectionString != "" || t.ConnectionStringFile != ""
	switch {
	case t.WebPubSub():
		return v.webPubSubTarget(item, t, cs)
	case t.AspNet():
		return v.aspNetTarget(item, t)
	}
	if t.Mode == "" {
		t.Mode = TargetModeDefault
		if cs {
			t.Mode = TargetModeServerless
		}
	}
	if err := v.oneOf(key, "mode", t.Mode, TargetModes); err != nil {
		return err
	}
	switch {
	case cs && !t.Serverless():
		return v.Errorf(key, "a connection_string target is reached in serverless mode; for default mode give the app server's url")
	case t.Serverless() && t.URL != "":
		return v.Errorf(key, "serverless needs connection_string, or embedded: true with embedded_hub.access_key")
	case t.Serverless() && t.Embedded && t.EmbeddedHub.AccessKey == "":
		return v.Errorf(key, "serverless needs embedded_hub.access_key on an embedded target")
	}
	if !t.Serverless() {
		return firstError(v.onlyServerless(item, "hub"), v.onlyServerless(item, "rest_api_version"))
	}
	return firstError(v.serverlessHub(item, t, cs), v.restAPIVersion(item, t), v.serverlessConflicts(item, t))
}

func (v *validator) onlyServerless(item, k string) error {
	if v.Has(keyPath(item, k)) {
		return v.Errorf(keyPath(item, k), "only allowed with mode: %s", TargetModeServerless)
	}
	return nil
}

// serverlessHub requires a hub name with a connection string and defaults
// it to the embedded hub's own name; names follow the service's rule.
func (v *validator) serverlessHub(item string, t *Target, cs bool) error {
	switch {
	case t.Hub == "" && cs:
		return v.Errorf(item, "hub is required with connection_string")
	case t.Hub == "":
		t.Hub = EmbeddedHubName
		return nil
	case !validHubName(t.Hub):
		return v.Errorf(keyPath(item, "hub"), "invalid hub name %q: use a letter, then letters, digits or \"_\"", t.Hub)
	}
	return nil
}

func (v *validator) restAPIVersion(item string, t *Target) error {
	if t.RESTAPIVersion == "" {
		t.RESTAPIVersion = DefaultRESTAPIVersion
	}
	return v.oneOf(keyPath(item, "rest_api_version"), "REST API version", t.RESTAPIVersion, RESTAPIVersions)
}

// serverlessConflicts refuses settings serverless mode cannot honour:
// hubprobe mints the bearer tokens itself, and the service always wants
// negotiate.
func (v *validator) serverlessConflicts(item string, t *Target) error {
	for _, k := range []string{"access_token", "access_token_file", "skip_negotiation"} {
		if v.Has(keyPath(item, k)) {
			return v.Errorf(keyPath(item, k), "not allowed with mode: %s (hubprobe mints the client tokens and negotiates)", TargetModeServerless)
		}
	}
	for name := range t.Headers {
		if strings.EqualFold(name, "Authorization") {
			return v.Errorf(keyPath(keyPath(item, "headers"), name), "not allowed with mode: %s (hubprobe mints the client tokens)", TargetModeServerless)
		}
	}
	return nil
}

// validHubName is the service's rule for hub names: a letter, then
// letters, digits or "_".
func validHubName(name string) bool {
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '_')) {
			return false
		}
	}
	return name != ""
}

// restKind reports whether a scenario kind sends through the REST API.
func restKind(kind string) bool { return strings.HasPrefix(kind, RESTKindPrefix) }
