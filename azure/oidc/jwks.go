package oidc

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"math/big"
)

// minRSABits refuses keys too weak to trust; Entra's are 2048-bit.
const minRSABits = 2048

// KeySet is a JWKS document (RFC 7517): what an issuer's jwks_uri serves.
type KeySet struct {
	Keys []JSONWebKey `json:"keys"`
}

// JSONWebKey is one key of a KeySet, with the members an RSA signing key
// of Microsoft Entra ID carries (less its certificate chain).
type JSONWebKey struct {
	KeyType string `json:"kty"`
	Use     string `json:"use,omitempty"`
	KeyID   string `json:"kid"`
	N       string `json:"n"`
	E       string `json:"e"`
	Issuer  string `json:"issuer,omitempty"`
}

// NewRSAKey publishes pub under kid as a signing key.
func NewRSAKey(kid string, pub *rsa.PublicKey) JSONWebKey {
	return JSONWebKey{
		KeyType: "RSA",
		Use:     "sig",
		KeyID:   kid,
		N:       base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		E:       base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}
}

// RSAPublicKey decodes an RSA signing key; other keys (encryption keys,
// other types, weak or malformed ones) are an error.
func (k JSONWebKey) RSAPublicKey() (*rsa.PublicKey, error) {
	if k.KeyType != "RSA" || (k.Use != "" && k.Use != "sig") || k.KeyID == "" {
		return nil, errors.New("not an RSA signing key with a kid")
	}
	n, errN := base64.RawURLEncoding.DecodeString(k.N)
	e, errE := base64.RawURLEncoding.DecodeString(k.E)
	if errN != nil || errE != nil || len(e) == 0 || len(e) > 4 {
		return nil, errors.New("modulus or exponent is not base64url")
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	if pub.N.BitLen() < minRSABits || pub.E < 3 || pub.E%2 == 0 {
		return nil, errors.New("key too weak")
	}
	return pub, nil
}
