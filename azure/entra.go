package azure

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// AuthType values, as the Azure SignalR service SDK's connection-string
// parser reads them (case-insensitively). The Web PubSub SDKs take a
// TokenCredential instead of an AuthType key; hubprobe reads the same
// grammar for both services so one kind of string serves every target.
const (
	// AuthTypeAzure is the default credential chain: environment,
	// workload identity, managed identity, then the developer tools.
	AuthTypeAzure = "azure"
	// AuthTypeAzureMSI is a managed identity, user-assigned with ClientId.
	AuthTypeAzureMSI = "azure.msi"
	// AuthTypeAzureApp is an application: ClientId, TenantId, and
	// ClientSecret or ClientCert (the path of a PEM or PKCS#12 file).
	AuthTypeAzureApp = "azure.app"
	// AuthTypeAAD is the SDK's older spelling: an application when
	// TenantId is set, else a managed identity.
	AuthTypeAAD = "aad"
)

// entraAuth is what an AuthType connection string signs in with.
type entraAuth struct {
	authType string // one of the AuthType* values, lower-case
	clientID string
	tenantID string
	secret   *azureAccessKey // ClientSecret; nil when absent
	certPath string          // ClientCert
}

// entraKeys lists, per AuthType, the keys its credential reads; any other
// Entra key is refused rather than silently ignored, so a string that
// carries a secret it does not use is caught by hubprobe check.
var entraKeys = map[string][]string{
	AuthTypeAzure:    {},
	AuthTypeAzureMSI: {csKeyClientID},
	AuthTypeAzureApp: {csKeyClientID, csKeyTenantID, csKeyClientSecret, csKeyClientCert},
	AuthTypeAAD:      {csKeyClientID, csKeyTenantID, csKeyClientSecret, csKeyClientCert},
}

// csEntraOnly are the keys that only an AuthType reads: all of them go
// with an application.
var csEntraOnly = entraKeys[AuthTypeAzureApp]

func csEntraOnlyKey(fields map[string]string) (string, bool) {
	for _, k := range csEntraOnly {
		if _, ok := fields[k]; ok {
			return k, true
		}
	}
	return "", false
}

// parseEntraAuth reads the AuthType and the keys that go with it. Errors
// name keys, never values.
func parseEntraAuth(fields map[string]string) (*entraAuth, error) {
	a := &entraAuth{authType: strings.ToLower(fields[csKeyAuthType])}
	allowed, ok := entraKeys[a.authType]
	if !ok {
		return nil, csError(csKeyAuthType, "must be azure, azure.msi or azure.app")
	}
	if _, ok := fields[csKeyAccessKey]; ok {
		return nil, csError(csKeyAccessKey, "is not used with an AuthType: remove one of them")
	}
	for _, k := range csEntraOnly {
		if _, ok := fields[k]; ok && !slices.Contains(allowed, k) {
			return nil, csError(k, "is not used with AuthType="+a.authType)
		}
		if v, ok := fields[k]; ok && v == "" {
			return nil, csError(k, "is empty")
		}
	}
	a.clientID, a.tenantID, a.certPath = fields[csKeyClientID], fields[csKeyTenantID], fields[csKeyClientCert]
	if s, ok := fields[csKeyClientSecret]; ok {
		a.secret = &azureAccessKey{secret: []byte(s)}
	}
	if err := a.checkApp(); err != nil {
		return nil, err
	}
	return a, nil
}

// checkBearerEndpoints keeps Entra ID tokens off the network in clear
// text: the endpoints REST calls go to must be https, or http to a
// loopback address (the reference hub on this machine).
func (cs ConnectionString) checkBearerEndpoints() error {
	for _, e := range []struct {
		key string
		u   *url.URL
	}{{csKeyEndpoint, cs.endpoint}, {csKeyServerEndpoint, cs.serverEndpoint}} {
		if e.u == nil || e.u.Scheme == "https" {
			continue
		}
		host := e.u.Hostname()
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost") {
			continue
		}
		return csError(e.key, "must be https:// with an AuthType (http:// only to a loopback address): it carries Entra ID tokens")
	}
	return nil
}

// checkApp holds an application to its keys: azure.app always, aad when it
// names a tenant (without one, aad is a managed identity).
func (a *entraAuth) checkApp() error {
	if a.authType == AuthTypeAAD && a.tenantID == "" {
		if a.secret != nil || a.certPath != "" {
			return csError(csKeyTenantID, "is missing: a client secret or certificate needs one")
		}
		return nil
	}
	if a.authType != AuthTypeAzureApp && a.authType != AuthTypeAAD {
		return nil
	}
	switch {
	case a.clientID == "":
		return csError(csKeyClientID, "is missing")
	case a.tenantID == "":
		return csError(csKeyTenantID, "is missing")
	case a.secret == nil && a.certPath == "":
		return csError(csKeyClientSecret, "or ClientCert is missing")
	case a.secret != nil && a.certPath != "":
		return csError(csKeyClientCert, "and ClientSecret are both set: keep one")
	}
	return nil
}

// app reports whether the credential is an application's (client secret
// or certificate), as opposed to a managed identity or the default chain.
func (a *entraAuth) app() bool {
	return a.authType == AuthTypeAzureApp || a.authType == AuthTypeAAD && a.tenantID != ""
}

// writeTo writes the Entra keys for String, the secret redacted.
func (a *entraAuth) writeTo(b *strings.Builder) {
	b.WriteString(csKeyAuthType + "=" + a.authType + ";")
	for _, kv := range [][2]string{{csKeyClientID, a.clientID}, {csKeyTenantID, a.tenantID}, {csKeyClientCert, a.certPath}} {
		if kv[1] != "" {
			b.WriteString(kv[0] + "=" + kv[1] + ";")
		}
	}
	if a.secret != nil {
		b.WriteString(csKeyClientSecret + "=" + csRedacted + ";")
	}
}

// AuthType is the connection string's AuthType, lower-case; empty for an
// access key.
func (cs ConnectionString) AuthType() string {
	if cs.entra == nil {
		return ""
	}
	return cs.entra.authType
}

// Entra reports whether the string signs in with Microsoft Entra ID rather
// than an access key.
func (cs ConnectionString) Entra() bool { return cs.entra != nil }

func (a *entraAuth) String() string {
	var b strings.Builder
	a.writeTo(&b)
	return b.String()
}

// Format keeps the client secret out of every fmt verb.
func (a *entraAuth) Format(f fmt.State, verb rune) { fmt.Fprint(f, a.String()) }
