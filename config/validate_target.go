package config

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/oidc"
)

func (v *validator) targets(c *Config) error {
	if len(c.Targets) == 0 {
		return v.Errorf("targets", "at least one target is required")
	}
	seen := map[string]int{}
	for i := range c.Targets {
		item, t := indexPath("targets", i), &c.Targets[i]
		err := firstError(
			v.name(item, "target", t.Name, seen),
			v.service(item, t),
			v.endpoint(item, t),
			v.embeddedHub(item, t),
			v.headers(item, t),
			v.tier(item, t),
			v.targetMode(item, t),
			v.azureMonitor(item, t),
			v.targetSLO(item, t),
		)
		if err != nil {
			return err
		}
		if err := v.targetSecrets(item, t); err != nil {
			return err
		}
	}
	return nil
}

// endpoint checks that exactly one of url, embedded and connection_string
// says where the hub is.
func (v *validator) endpoint(item string, t *Target) error {
	cs := t.ConnectionString != "" || t.ConnectionStringFile != ""
	switch {
	case t.URL != "" && t.Embedded:
		return v.Errorf(item, "url and embedded are mutually exclusive")
	case cs && t.URL != "":
		return v.Errorf(item, "connection_string and url are mutually exclusive")
	case cs && t.Embedded:
		return v.Errorf(item, "connection_string and embedded are mutually exclusive")
	case t.WebPubSub() && t.URL != "":
		return v.Errorf(keyPath(item, "url"), "not allowed with service: %s; give connection_string, or embedded: true", ServiceWebPubSub)
	case t.WebPubSub() && !t.Embedded && !cs:
		return v.Errorf(item, "one of embedded: true or connection_string is required with service: %s", ServiceWebPubSub)
	case t.URL == "" && !t.Embedded && !cs:
		return v.Errorf(item, "one of url, embedded: true or connection_string is required")
	case t.Embedded, cs:
		return nil
	}
	key := keyPath(item, "url")
	u, err := url.Parse(t.URL)
	if err != nil {
		return v.Errorf(key, "invalid url: %s", urlError(err))
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return v.Errorf(key, "scheme must be http, https, ws or wss, got %q", u.Scheme)
	}
	if u.Host == "" {
		return v.Errorf(key, "url has no host")
	}
	return nil
}

func (v *validator) embeddedHub(item string, t *Target) error {
	key := keyPath(item, "embedded_hub")
	if !t.Embedded {
		if v.Has(key) {
			return v.Errorf(key, "only allowed with embedded: true")
		}
		return nil
	}
	h := &t.EmbeddedHub
	if h.MaxMessageSize < 1 {
		return v.Errorf(keyPath(key, "max_message_size"), "must be at least 1, got %d", h.MaxMessageSize)
	}
	if h.MessageRateLimit < 0 {
		return v.Errorf(keyPath(key, "message_rate_limit"), "must not be negative, got %g", h.MessageRateLimit)
	}
	if h.RedirectNegotiate && h.AccessKey == "" && h.EntraIssuer == "" {
		return v.Errorf(keyPath(key, "redirect_negotiate"), "needs access_key or entra_issuer")
	}
	if h.DropEvery > 0 {
		if err := v.oneOf(keyPath(key, "drop"), "drop", h.Drop, Drills); err != nil {
			return err
		}
	} else if h.Drop != "" {
		return v.Errorf(keyPath(key, "drop"), "needs drop_every")
	}
	return firstError(
		v.entraIssuer(key, h),
		v.notNegative(keyPath(key, "delivery_delay"), h.DeliveryDelay),
		v.notNegative(keyPath(key, "drop_every"), h.DropEvery),
		v.notNegative(keyPath(key, "idle_timeout"), h.IdleTimeout),
		v.intRange(keyPath(key, "units"), h.Units, 0, MaxUnits, fmt.Sprint(MaxUnits)),
		v.intRange(keyPath(key, "connection_quota"), h.ConnectionQuota, 0, MaxConnectionQuota, fmt.Sprint(MaxConnectionQuota)),
		v.secret(keyPath(key, "access_key"), "", &h.AccessKey, nil),
	)
}

// entraIssuer checks the hub's Entra sign-in: an https issuer URL, which
// disable_local_auth needs (else nothing could call the REST APIs).
func (v *validator) entraIssuer(key string, h *EmbeddedHub) error {
	if h.EntraIssuer != "" {
		if err := oidc.CheckIssuer(h.EntraIssuer); err != nil {
			return v.Errorf(keyPath(key, "entra_issuer"), "%s", strings.TrimPrefix(err.Error(), "oidc: "))
		}
	}
	if h.DisableLocalAuth && h.EntraIssuer == "" {
		return v.Errorf(keyPath(key, "disable_local_auth"), "needs entra_issuer: without it nothing could call the REST APIs")
	}
	return nil
}

// headers rejects names that are not HTTP tokens, values that could split a
// request, and a second Authorization source. Values are never quoted: they
// may hold credentials.
func (v *validator) headers(item string, t *Target) error {
	key := keyPath(item, "headers")
	canonical := map[string]string{}
	for _, name := range sortedKeys(t.Headers) {
		if !validHeaderName(name) {
			return v.ErrorAt(v.LineOf(keyPath(key, name)), key, "invalid header name %q", name)
		}
		if strings.ContainsAny(t.Headers[name], "\r\n\x00") {
			return v.Errorf(keyPath(key, name), "value must not contain line breaks or NUL")
		}
		c := http.CanonicalHeaderKey(name)
		if other, dup := canonical[c]; dup {
			return v.Errorf(keyPath(key, name), "duplicate header %q (also written as %q)", name, other)
		}
		canonical[c] = name
	}
	if _, ok := canonical["Authorization"]; ok && (t.AccessToken != "" || t.AccessTokenFile != "") {
		return v.Errorf(keyPath(key, canonical["Authorization"]), "conflicts with access_token")
	}
	return nil
}

// targetSecrets resolves the target's access token and connection string,
// and checks that the connection string parses. Errors never quote them.
func (v *validator) targetSecrets(item string, t *Target) error {
	if err := v.secret(keyPath(item, "access_token"), keyPath(item, "access_token_file"), &t.AccessToken, &t.AccessTokenFile); err != nil {
		return err
	}
	inline, file := keyPath(item, "connection_string"), keyPath(item, "connection_string_file")
	if err := v.secret(inline, file, &t.ConnectionString, &t.ConnectionStringFile); err != nil {
		return err
	}
	if t.ConnectionString == "" {
		return nil
	}
	if _, err := azure.ParseConnectionString(string(t.ConnectionString)); err != nil {
		key := inline
		if t.ConnectionStringFile != "" {
			key = file
		}
		return v.Errorf(key, "%s", connectionStringProblem(err))
	}
	return nil
}

// connectionStringProblem names the key at fault; the parser's errors
// never carry a value from the string, but say so only for its own type.
func connectionStringProblem(err error) string {
	var ce *azure.ConnectionStringError
	if errors.As(err, &ce) {
		return ce.Key + " " + ce.Problem
	}
	return "invalid connection string"
}

// secret resolves a secret written inline (with ${ENV} expanded) or, when
// fileKey is not empty, read from the file it names; both at once is an
// error. After it, *value holds the secret and *file the file's full path.
func (v *validator) secret(inlineKey, fileKey string, value *Secret, file *string) error {
	inlineName, fileName := lastKey(inlineKey), lastKey(fileKey)
	switch {
	case *value != "" && file != nil && *file != "":
		return v.Errorf(parentKey(inlineKey), "%s and %s are mutually exclusive", inlineName, fileName)
	case *value != "":
		s, err := expandEnv(string(*value))
		if err != nil {
			return v.Errorf(inlineKey, "%s", err)
		}
		if s == "" {
			return v.Errorf(inlineKey, "is empty after expanding environment variables")
		}
		*value = Secret(s)
	case file != nil && *file != "":
		s, path, err := readSecretFile(v.dir, *file)
		if err != nil {
			return v.Errorf(fileKey, "%s", err)
		}
		*value, *file = Secret(s), path
	}
	return nil
}

// lastKey and parentKey split "targets[0].access_token".
func lastKey(path string) string   { return path[strings.LastIndexByte(path, '.')+1:] }
func parentKey(path string) string { return path[:max(strings.LastIndexByte(path, '.'), 0)] }
