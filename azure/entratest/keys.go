package entratest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"math/big"
	"testing"
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

// jsonWebKey is one entry of the JWKS document, with the members Entra's
// discovery/v2.0/keys carries for an RSA signing key (less x5c).
type jsonWebKey struct {
	KeyType string `json:"kty"`
	Use     string `json:"use"`
	KeyID   string `json:"kid"`
	N       string `json:"n"`
	E       string `json:"e"`
	Issuer  string `json:"issuer,omitempty"`
}

// jwk is the published form of k's public half.
func (k signingKey) jwk(issuer string) jsonWebKey {
	pub := k.private.PublicKey
	return jsonWebKey{
		KeyType: "RSA",
		Use:     "sig",
		KeyID:   k.kid,
		N:       base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E:       base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		Issuer:  issuer,
	}
}
