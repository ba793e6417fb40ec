package config

import (
	"net/http"
	"net/url"
	"strings"
)

func (v *validator) targets(c *Config) error {
	if len(c.Targets) == 0 {
		return v.errorf("targets", "at least one target is required")
	}
	seen := map[string]int{}
	for i := range c.Targets {
		item, t := indexPath("targets", i), &c.Targets[i]
		err := firstError(
			v.name(item, "target", t.Name, seen),
			v.endpoint(item, t),
			v.embeddedHub(item, t),
			v.headers(item, t),
			v.tier(item, t),
		)
		if err != nil {
			return err
		}
		if err := v.accessToken(item, t); err != nil {
			return err
		}
	}
	return nil
}

// endpoint checks that exactly one of url and embedded says where the hub is.
func (v *validator) endpoint(item string, t *Target) error {
	switch {
	case t.URL != "" && t.Embedded:
		return v.errorf(item, "url and embedded are mutually exclusive")
	case t.URL == "" && !t.Embedded:
		return v.errorf(item, "one of url or embedded: true is required")
	case t.Embedded:
		return nil
	}
	key := keyPath(item, "url")
	u, err := url.Parse(t.URL)
	if err != nil {
		return v.errorf(key, "invalid url: %s", urlError(err))
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return v.errorf(key, "scheme must be http, https, ws or wss, got %q", u.Scheme)
	}
	if u.Host == "" {
		return v.errorf(key, "url has no host")
	}
	return nil
}

func (v *validator) embeddedHub(item string, t *Target) error {
	key := keyPath(item, "embedded_hub")
	if !t.Embedded {
		if v.has(key) {
			return v.errorf(key, "only allowed with embedded: true")
		}
		return nil
	}
	h := t.EmbeddedHub
	if h.MaxMessageSize < 1 {
		return v.errorf(keyPath(key, "max_message_size"), "must be at least 1, got %d", h.MaxMessageSize)
	}
	return v.notNegative(keyPath(key, "delivery_delay"), h.DeliveryDelay)
}

// headers rejects names that are not HTTP tokens, values that could split a
// request, and a second Authorization source. Values are never quoted: they
// may hold credentials.
func (v *validator) headers(item string, t *Target) error {
	key := keyPath(item, "headers")
	canonical := map[string]string{}
	for _, name := range sortedKeys(t.Headers) {
		if !validHeaderName(name) {
			return errorAt(v.file, v.lineOf(keyPath(key, name)), key, "invalid header name %q", name)
		}
		if strings.ContainsAny(t.Headers[name], "\r\n\x00") {
			return v.errorf(keyPath(key, name), "value must not contain line breaks or NUL")
		}
		c := http.CanonicalHeaderKey(name)
		if other, dup := canonical[c]; dup {
			return v.errorf(keyPath(key, name), "duplicate header %q (also written as %q)", name, other)
		}
		canonical[c] = name
	}
	if _, ok := canonical["Authorization"]; ok && (t.AccessToken != "" || t.AccessTokenFile != "") {
		return v.errorf(keyPath(key, canonical["Authorization"]), "conflicts with access_token")
	}
	return nil
}

// accessToken resolves the token into t.AccessToken: inline with ${ENV}
// expanded, or read from access_token_file.
func (v *validator) accessToken(item string, t *Target) error {
	inline, file := keyPath(item, "access_token"), keyPath(item, "access_token_file")
	switch {
	case t.AccessToken != "" && t.AccessTokenFile != "":
		return v.errorf(item, "access_token and access_token_file are mutually exclusive")
	case t.AccessToken != "":
		token, err := expandEnv(string(t.AccessToken))
		if err != nil {
			return v.errorf(inline, "%s", err)
		}
		if token == "" {
			return v.errorf(inline, "is empty after expanding environment variables")
		}
		t.AccessToken = Secret(token)
	case t.AccessTokenFile != "":
		token, path, err := readSecretFile(v.dir, t.AccessTokenFile)
		if err != nil {
			return v.errorf(file, "%s", err)
		}
		t.AccessToken, t.AccessTokenFile = Secret(token), path
	}
	return nil
}
