package monitortest

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// Env is the environment a process needs to read this server's metrics
// with azidentity's default chain: App Service's managed identity
// variables, and SSL_CERT_FILE to trust the server.
func (s *Server) Env() []string {
	return []string{
		"IDENTITY_ENDPOINT=" + s.IdentityEndpoint,
		"IDENTITY_HEADER=" + s.IdentityHeader,
		"SSL_CERT_FILE=" + s.CAFile,
	}
}

// ManagedIdentityCredential is azidentity's managed identity credential
// signing in at the server's identity endpoint, as it does on App Service.
// It sets IDENTITY_ENDPOINT and IDENTITY_HEADER for the rest of the test,
// which therefore cannot run in parallel.
func (s *Server) ManagedIdentityCredential(t *testing.T) azcore.TokenCredential {
	t.Helper()
	t.Setenv("IDENTITY_ENDPOINT", s.IdentityEndpoint)
	t.Setenv("IDENTITY_HEADER", s.IdentityHeader)
	cred, err := azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{
		ClientOptions: azcore.ClientOptions{Transport: s.identityClient},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// CloseIdleConnections closes the kept-alive connections of Client and of
// the credentials ManagedIdentityCredential made, so that a test can check
// that nothing else is left running.
func (s *Server) CloseIdleConnections() {
	s.Client.CloseIdleConnections()
	s.identityClient.CloseIdleConnections()
}
