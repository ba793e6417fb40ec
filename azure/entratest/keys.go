package entratest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"testing"

	"github.com/hubprobe/hubprobe/azure/oidc"
)

// signingKey is one RSA key of the tenant, named by its kid.
type signingKey struct {
	kid     string
	private *rsa.PrivateKey
}

// newSigningKey makes a 2048-bit RSA key. Its kid is derived from the
// public key, as Entra's are thumbprints of their certificates.
func newSigningKey(t testing.TB) signingKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("entratest: RSA key: %v", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatalf("entratest: public key: %v", err)
	}
	sum := sha256.Sum256(der)
	return signingKey{kid: base64.RawURLEncoding.EncodeToString(sum[:20]), private: k}
}

// jwk is the published form of k's public half.
func (k signingKey) jwk(issuer string) oidc.JSONWebKey {
	key := oidc.NewRSAKey(k.kid, &k.private.PublicKey)
	key.Issuer = issuer
	return key
}
