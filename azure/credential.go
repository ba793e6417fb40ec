package azure

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// Scopes of the services' data planes, for their REST APIs and
// :generateToken. The resource is the same in every cloud.
const (
	SignalRScope   = "https://signalr.azure.com/.default"
	WebPubSubScope = "https://webpubsub.azure.com/.default"
)

// authorityHostEnv is the variable azidentity reads the authority host from
// when the options name none; hubprobe leaves the choice to it and only
// reads it to tell a public cloud from a private one.
const authorityHostEnv = "AZURE_AUTHORITY_HOST"

// CredentialOptions tune the credentials a connection string signs in with.
type CredentialOptions struct {
	// Transport sends the credential's requests (Entra ID, the managed
	// identity endpoint); nil means azcore's default HTTP client, which
	// trusts the system's roots (and SSL_CERT_FILE).
	Transport policy.Transporter
}

func (o CredentialOptions) client() azcore.ClientOptions {
	return azcore.ClientOptions{Transport: o.Transport}
}

// TokenCredential is the Microsoft Entra ID credential the string names
// with its AuthType. For an access-key string, which cannot sign in to
// Entra ID (nor read Azure Monitor), it is the ambient chain of
// AmbientCredential.
func (cs ConnectionString) TokenCredential(o CredentialOptions) (azcore.TokenCredential, error) {
	a := cs.entra
	switch {
	case a == nil || a.authType == AuthTypeAzure:
		return AmbientCredential(o)
	case a.app() && a.secret != nil:
		return azidentity.NewClientSecretCredential(a.tenantID, a.clientID, string(a.secret.secret),
			&azidentity.ClientSecretCredentialOptions{ClientOptions: o.client(), DisableInstanceDiscovery: privateCloud()})
	case a.app():
		return certificateCredential(a, o)
	}
	mo := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: o.client()}
	if a.clientID != "" {
		mo.ID = azidentity.ClientID(a.clientID)
	}
	return azidentity.NewManagedIdentityCredential(mo)
}

// AmbientCredential is azidentity's default chain: the environment
// (AZURE_CLIENT_ID with a secret or certificate), Kubernetes workload
// identity (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE,
// set by its webhook), managed identity, then the Azure CLI and friends.
func AmbientCredential(o CredentialOptions) (azcore.TokenCredential, error) {
	return azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{
		ClientOptions: o.client(), DisableInstanceDiscovery: privateCloud(),
	})
}

// certificateCredential reads ClientCert, a PEM or PKCS#12 file without a
// password, as the SignalR SDK takes a certificate path. Errors name the
// key and the file, never the file's content.
func certificateCredential(a *entraAuth, o CredentialOptions) (azcore.TokenCredential, error) {
	data, err := os.ReadFile(a.certPath)
	if err != nil {
		return nil, fmt.Errorf("azure: connection string: ClientCert: %w", errors.Unwrap(err))
	}
	certs, key, err := azidentity.ParseCertificates(data, nil)
	if err != nil {
		return nil, fmt.Errorf("azure: connection string: ClientCert %s holds no usable certificate and key", a.certPath)
	}
	return azidentity.NewClientCertificateCredential(a.tenantID, a.clientID, certs, key,
		&azidentity.ClientCertificateCredentialOptions{ClientOptions: o.client(), DisableInstanceDiscovery: privateCloud()})
}

// privateCloud reports whether AZURE_AUTHORITY_HOST names a host that is
// not one of Azure's public, China or US Government authorities. Instance
// discovery asks the public cloud about the authority, which a private or
// disconnected cloud's cannot answer, so it is skipped there.
func privateCloud() bool {
	raw := os.Getenv(authorityHostEnv)
	if raw == "" {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return true
	}
	for _, c := range []cloud.Configuration{cloud.AzurePublic, cloud.AzureChina, cloud.AzureGovernment} {
		known, _ := url.Parse(c.ActiveDirectoryAuthorityHost)
		if strings.EqualFold(u.Hostname(), known.Hostname()) {
			return false
		}
	}
	return true
}

// Credentials keeps one credential per sign-in, across runs and reloads,
// so that the tokens azidentity caches in each are reused rather than
// asked of Entra ID again for every run. It is safe for concurrent use.
type Credentials struct {
	Options CredentialOptions

	mu    sync.Mutex
	creds map[[sha256.Size]byte]azcore.TokenCredential
}

// For is cs.TokenCredential, built once for each distinct sign-in.
func (c *Credentials) For(cs ConnectionString) (azcore.TokenCredential, error) {
	key := cs.credentialKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	if cred, ok := c.creds[key]; ok {
		return cred, nil
	}
	cred, err := cs.TokenCredential(c.Options)
	if err != nil {
		return nil, err
	}
	if c.creds == nil {
		c.creds = make(map[[sha256.Size]byte]azcore.TokenCredential)
	}
	c.creds[key] = cred
	return cred, nil
}

// credentialKey identifies what cs signs in with (every access-key string
// uses the ambient chain); a digest, so the map holds no secret.
func (cs ConnectionString) credentialKey() [sha256.Size]byte {
	a := cs.entra
	if a == nil || a.authType == AuthTypeAzure {
		return sha256.Sum256([]byte(AuthTypeAzure))
	}
	h := sha256.New()
	for _, s := range []string{a.authType, a.clientID, a.tenantID, a.certPath} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if a.secret != nil {
		h.Write(a.secret.secret)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
