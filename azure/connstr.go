package azure

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Canonical names of the connection string keys hubprobe reads. Errors name
// keys only in these spellings, never by echoing the input.
const (
	csKeyEndpoint       = "Endpoint"
	csKeyAccessKey      = "AccessKey"
	csKeyVersion        = "Version"
	csKeyPort           = "Port"
	csKeyClientEndpoint = "ClientEndpoint"
	csKeyServerEndpoint = "ServerEndpoint"
	csKeyAuthType       = "AuthType"
	csKeyClientID       = "ClientId"
	csKeyTenantID       = "TenantId"
	csKeyClientSecret   = "ClientSecret"
	csKeyClientCert     = "ClientCert"
)

var csKnownKeys = []string{
	csKeyEndpoint, csKeyAccessKey, csKeyVersion, csKeyPort,
	csKeyClientEndpoint, csKeyServerEndpoint, csKeyAuthType,
	csKeyClientID, csKeyTenantID, csKeyClientSecret, csKeyClientCert,
}

const csRedacted = "REDACTED"

// ConnectionString is a parsed Azure SignalR Service or Web PubSub
// connection string: Endpoint=https://<name>.service.signalr.net;AccessKey=<key>;Version=1.0;
// signs with an access key, and AuthType=azure, azure.msi or azure.app
// (with ClientId, TenantId, ClientSecret or ClientCert as the SignalR
// service SDK reads them) signs in with Microsoft Entra ID instead.
// Every way of printing it hides the access key and the client secret, and
// its fields are unexported so a struct holding one cannot spill them
// either (nested deeper than the top level, fmt prints a pointer, not the
// secret's bytes).
type ConnectionString struct {
	endpoint       *url.URL // as written, without a trailing '/'; tokens' aud is built on it
	port           int      // the Port key; 0 when absent
	clientEndpoint *url.URL
	serverEndpoint *url.URL
	version        string
	key            *azureAccessKey // nil when entra is set
	entra          *entraAuth      // nil for an access key
}

type azureAccessKey struct{ secret []byte }

// ConnectionStringError says which key of a connection string is missing or
// invalid. It never carries a value from the string: values may be secrets,
// or may be a secret run together with a missing ';'.
type ConnectionStringError struct {
	Key     string // one of the canonical key names, such as "AccessKey"
	Problem string
}

func (e *ConnectionStringError) Error() string {
	return "azure: connection string: " + e.Key + " " + e.Problem
}

func csError(key, problem string) *ConnectionStringError {
	return &ConnectionStringError{Key: key, Problem: problem}
}

// ParseConnectionString parses an Azure SignalR Service connection string.
// Keys are case-insensitive; spaces around keys and values, empty parts and
// parts without '=' are ignored, as the service SDKs do. Unknown keys are
// ignored. Endpoint and AccessKey are required; a Version must be 1.x;
// identity-based AuthTypes are refused because hubprobe signs its own tokens.
func ParseConnectionString(s string) (ConnectionString, error) {
	fields, err := csFields(s)
	if err != nil {
		return ConnectionString{}, err
	}
	var cs ConnectionString
	if cs.endpoint, err = csEndpoint(fields, csKeyEndpoint, true); err != nil {
		return ConnectionString{}, err
	}
	if cs.clientEndpoint, err = csEndpoint(fields, csKeyClientEndpoint, false); err != nil {
		return ConnectionString{}, err
	}
	if cs.serverEndpoint, err = csEndpoint(fields, csKeyServerEndpoint, false); err != nil {
		return ConnectionString{}, err
	}
	if cs.port, err = csPort(fields); err != nil {
		return ConnectionString{}, err
	}
	if cs.version, err = csVersion(fields); err != nil {
		return ConnectionString{}, err
	}
	if _, entra := fields[csKeyAuthType]; entra {
		if cs.entra, err = parseEntraAuth(fields); err == nil {
			err = cs.checkBearerEndpoints()
		}
	} else {
		cs.key, err = csAccessKey(fields)
	}
	if err != nil {
		return ConnectionString{}, err
	}
	return cs, nil
}

// csFields maps canonical key names to trimmed values.
func csFields(s string) (map[string]string, error) {
	fields := make(map[string]string)
	for part := range strings.SplitSeq(s, ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		key := csCanonicalKey(strings.TrimSpace(name))
		if key == "" {
			continue
		}
		if _, dup := fields[key]; dup {
			return nil, csError(key, "appears more than once")
		}
		fields[key] = strings.TrimSpace(value)
	}
	return fields, nil
}

func csCanonicalKey(name string) string {
	for _, k := range csKnownKeys {
		if strings.EqualFold(name, k) {
			return k
		}
	}
	return ""
}

// csEndpoint validates an absolute http(s) URL without user info, query or
// fragment. A path is kept (without its trailing '/') so the service can be
// reached behind a path prefix.
func csEndpoint(fields map[string]string, key string, required bool) (*url.URL, error) {
	raw, ok := fields[key]
	if !ok || raw == "" {
		if required {
			return nil, csError(key, "is missing")
		}
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, csError(key, "is not a valid URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, csError(key, "must be an http:// or https:// URL")
	case u.Hostname() == "":
		return nil, csError(key, "has no host")
	case !csValidHost(u.Hostname()):
		return nil, csError(key, "has an invalid host name")
	case !csValidURLPort(u.Port()):
		return nil, csError(key, "has an invalid port")
	case u.User != nil:
		return nil, csError(key, "must not contain user information")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, csError(key, "must not have a query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	return u, nil
}

// csValidHost accepts DNS names and IP addresses only, so nothing else
// pasted into the Endpoint (such as a key after a missing ';') is kept and
// printed back.
func csValidHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

func csValidURLPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func csPort(fields map[string]string) (int, error) {
	raw, ok := fields[csKeyPort]
	if !ok {
		return 0, nil
	}
	p, err := strconv.Atoi(raw)
	if err != nil || p < 1 || p > 65535 {
		return 0, csError(csKeyPort, "must be a number from 1 to 65535")
	}
	return p, nil
}

// csVersion accepts 1.x, the only service version the data-plane SDKs speak.
func csVersion(fields map[string]string) (string, error) {
	v, ok := fields[csKeyVersion]
	if !ok {
		return "", nil
	}
	minor, found := strings.CutPrefix(v, "1.")
	if !found || minor == "" || strings.Trim(minor, "0123456789") != "" {
		return "", csError(csKeyVersion, "is not supported (want 1.x)")
	}
	return v, nil
}

func csAccessKey(fields map[string]string) (*azureAccessKey, error) {
	if key, ok := csEntraOnlyKey(fields); ok {
		return nil, csError(key, "goes with an AuthType, and the connection string has none")
	}
	key, ok := fields[csKeyAccessKey]
	if !ok {
		return nil, csError(csKeyAccessKey, "is missing")
	}
	if key == "" {
		return nil, csError(csKeyAccessKey, "is empty")
	}
	return &azureAccessKey{secret: []byte(key)}, nil
}

// Endpoint returns the service endpoint as written in the connection
// string, without a trailing '/'. Token audiences are built on it.
func (cs ConnectionString) Endpoint() string { return csURLString(cs.endpoint) }

// ServerEndpoint returns the base URL for REST calls: the ServerEndpoint
// key when set, otherwise Endpoint with the Port key applied.
func (cs ConnectionString) ServerEndpoint() string {
	if cs.serverEndpoint != nil {
		return csURLString(cs.serverEndpoint)
	}
	return csURLString(cs.withPort(cs.endpoint))
}

// ClientURL returns where clients connect: {base}/client/?hub=<hub>, where
// base is the ClientEndpoint key when set, otherwise Endpoint with the Port
// key applied. The hub name is lower-cased as the service SDKs do.
func (cs ConnectionString) ClientURL(hub string) string {
	base := cs.clientEndpoint
	if base == nil {
		base = cs.withPort(cs.endpoint)
	}
	return csURLString(base) + "/client/?hub=" + url.QueryEscape(strings.ToLower(hub))
}

// AccessKey returns a copy of the key's bytes (the string's UTF-8 bytes,
// not base64-decoded), for verifying tokens.
func (cs ConnectionString) AccessKey() []byte {
	if cs.key == nil {
		return nil
	}
	return append([]byte(nil), cs.key.secret...)
}

func (cs ConnectionString) withPort(u *url.URL) *url.URL {
	if u == nil || cs.port == 0 {
		return u
	}
	c := *u
	c.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(cs.port))
	return &c
}

// csOrigin returns scheme://host[:port] of u.
func csOrigin(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func csURLString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return csOrigin(u) + u.EscapedPath()
}

// String returns the connection string with the access key and the
// client secret redacted.
func (cs ConnectionString) String() string {
	var b strings.Builder
	b.WriteString(csKeyEndpoint + "=" + cs.Endpoint() + ";")
	if cs.entra != nil {
		cs.entra.writeTo(&b)
	} else {
		b.WriteString(csKeyAccessKey + "=" + csRedacted + ";")
	}
	if cs.version != "" {
		b.WriteString(csKeyVersion + "=" + cs.version + ";")
	}
	if cs.port != 0 {
		b.WriteString(csKeyPort + "=" + strconv.Itoa(cs.port) + ";")
	}
	if cs.clientEndpoint != nil {
		b.WriteString(csKeyClientEndpoint + "=" + csURLString(cs.clientEndpoint) + ";")
	}
	if cs.serverEndpoint != nil {
		b.WriteString(csKeyServerEndpoint + "=" + csURLString(cs.serverEndpoint) + ";")
	}
	return b.String()
}

// GoString is what %#v prints, with the access key or client secret
// redacted.
func (cs ConnectionString) GoString() string {
	if cs.entra != nil {
		return fmt.Sprintf("azure.ConnectionString{%q}", cs.String())
	}
	return fmt.Sprintf("azure.ConnectionString{Endpoint:%q, AccessKey:%q, Version:%q, Port:%d, ClientEndpoint:%q, ServerEndpoint:%q}",
		cs.Endpoint(), csRedacted, cs.version, cs.port, csURLString(cs.clientEndpoint), csURLString(cs.serverEndpoint))
}

// Format makes every fmt verb print the redacted form, so no format string
// can reach the key.
func (cs ConnectionString) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, cs.GoString())
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(cs.String()))
	default:
		fmt.Fprint(f, cs.String())
	}
}

// Format keeps the key's bytes out of every fmt verb.
func (k *azureAccessKey) Format(f fmt.State, verb rune) { fmt.Fprint(f, csRedacted) }

// azureEscape escapes every byte but RFC 3986's unreserved characters, as
// .NET's Uri.EscapeDataString does when the service SDKs build REST paths,
// so user, group and connection IDs stay one path segment each.
// A segment of only dots is escaped whole, or "." and ".." would be read
// as relative path steps.
func azureEscape(s string) string {
	const hex = "0123456789ABCDEF"
	dotsOnly := strings.Trim(s, ".") == ""
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '~' || c == '.' && !dotsOnly {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
