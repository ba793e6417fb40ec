// Package entratest is a loopback Microsoft Entra ID tenant for tests: an
// OpenID issuer over TLS on 127.0.0.1 that the Azure SDK for Go's
// azidentity (through MSAL for Go) signs in against for real, with client
// secrets and with workload-identity (federated) assertions.
//
// It serves, under /{tenant}/, what MSAL and a token verifier fetch:
// v2.0/.well-known/openid-configuration, discovery/v2.0/keys (a JWKS of
// RSA keys named by kid; tokens are signed with the second key listed, so
// a verifier that ignores kid fails) and oauth2/v2.0/token (grant_type
// client_credentials, scope "<resource>/.default"). Its failures carry
// Entra's AADSTS codes and JSON shape, and never the secret or assertion
// presented.
//
// Credentials must set DisableInstanceDiscovery: MSAL asks
// login.microsoftonline.com, not the authority, for instance metadata of
// a host it does not know. No product code imports this package.
package entratest

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
)

// Options configure a Server; zero values take defaults.
type Options struct {
	// Secrets maps a client (application) ID to its client secret.
	Secrets map[string]string
	// Federated maps a client ID to the assertion (the contents of a
	// workload-identity token file) it must present.
	Federated map[string]string
	// TokenLifetime is the access tokens' lifetime (expires_in); default 1h.
	TokenLifetime time.Duration
}

// DefaultTokenLifetime is an access token's lifetime when Options leave it
// zero: what Entra issues by default.
const DefaultTokenLifetime = time.Hour

// Server is a loopback Entra ID tenant.
type Server struct {
	opts   Options
	srv    *httptest.Server
	tenant string
	caFile string

	mu      sync.Mutex
	keys    []signingKey // all published; the last one signs
	unknown *signingKey  // made on first use; never published

	tokenRequests atomic.Int64
	keyRequests   atomic.Int64
}

// New starts a tenant with two signing keys, closed by t.Cleanup.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.TokenLifetime <= 0 {
		o.TokenLifetime = DefaultTokenLifetime
	}
	s := &Server{opts: o, tenant: newGUID()}
	s.keys = []signingKey{newSigningKey(t), newSigningKey(t)}
	s.srv = localtest.TLSServer(t, s.routes())
	s.caFile = writeCA(t, s.srv)
	return s
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", s.serveOpenIDConfiguration)
	mux.HandleFunc("GET /{tenant}/discovery/v2.0/keys", s.serveKeys)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", s.serveToken)
	return mux
}

// writeCA writes the server's self-signed certificate, its own CA, as PEM.
func writeCA(t testing.TB, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "entratest-ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, block, 0o600); err != nil {
		t.Fatalf("entratest: CA file: %v", err)
	}
	return path
}

// AuthorityHost is "https://127.0.0.1:PORT/": what AZURE_AUTHORITY_HOST,
// or azcore's cloud.Configuration.ActiveDirectoryAuthorityHost, is set to.
func (s *Server) AuthorityHost() string { return s.srv.URL + "/" }

// Tenant is the tenant's ID, a GUID.
func (s *Server) Tenant() string { return s.tenant }

// Issuer is AuthorityHost()+Tenant()+"/v2.0": the iss of its tokens and
// the OpenID issuer its discovery document names.
func (s *Server) Issuer() string { return s.AuthorityHost() + s.tenant + "/v2.0" }

// CAFile is a PEM file of the TLS CA, for SSL_CERT_FILE (or
// NODE_EXTRA_CA_CERTS) of a child process.
func (s *Server) CAFile() string { return s.caFile }

// HTTPClient trusts the CA: for azcore's ClientOptions.Transport, or a
// verifier fetching the keys.
func (s *Server) HTTPClient() *http.Client { return s.srv.Client() }

// TokenRequests counts the token endpoint's requests that issued a token.
func (s *Server) TokenRequests() int { return int(s.tokenRequests.Load()) }

// KeyRequests counts the requests for the JWKS document.
func (s *Server) KeyRequests() int { return int(s.keyRequests.Load()) }

// WriteTokenFile writes Federated[clientID] to a file in t.TempDir and
// returns its path, for AZURE_FEDERATED_TOKEN_FILE or TokenFilePath.
func (s *Server) WriteTokenFile(t testing.TB, clientID string) string {
	t.Helper()
	assertion, ok := s.opts.Federated[clientID]
	if !ok {
		t.Fatalf("entratest: no federated assertion for client %q", clientID)
	}
	path := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(path, []byte(assertion), 0o600); err != nil {
		t.Fatalf("entratest: token file: %v", err)
	}
	return path
}
