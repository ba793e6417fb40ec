package aspnethub

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Token purposes, as the real server's data protection names them.
const (
	purposeConnection = "SignalR.ConnectionToken"
	purposeGroups     = "SignalR.Groups.v1.1"
)

// signer protects tokens with a key of the hub's own.
type signer struct{ key []byte }

func newSigner() signer {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return signer{key: key}
}

var b64 = base64.RawURLEncoding

// protect returns value and its signature for purpose.
func (s signer) protect(purpose, value string) string {
	return b64.EncodeToString([]byte(value)) + "." + b64.EncodeToString(s.mac(purpose, value))
}

// unprotect returns the value of token, ok only when its signature for
// purpose verifies.
func (s signer) unprotect(purpose, token string) (string, bool) {
	encoded, sig, found := strings.Cut(token, ".")
	if !found {
		return "", false
	}
	value, err1 := b64.DecodeString(encoded)
	mac, err2 := b64.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, string(value))) {
		return "", false
	}
	return string(value), true
}

func (s signer) mac(purpose, value string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return m.Sum(nil)
}

// connectionToken is the protected "id:user" (no user here).
func (s signer) connectionToken(id string) string { return s.protect(purposeConnection, id+":") }

// connectionID returns the id a connection token names.
func (s signer) connectionID(token string) (string, bool) {
	value, ok := s.unprotect(purposeConnection, token)
	id, _, found := strings.Cut(value, ":")
	return id, ok && found && id != ""
}

// groupsToken is the protected "id:[groups]".
func (s signer) groupsToken(id string, groups []string) string {
	list, _ := json.Marshal(groups) // a []string always marshals
	return s.protect(purposeGroups, id+":"+string(list))
}

// groups returns the groups a groups token lists for connection id.
func (s signer) groups(id, token string) ([]string, bool) {
	value, ok := s.unprotect(purposeGroups, token)
	owner, list, found := strings.Cut(value, ":")
	var groups []string
	if !ok || !found || owner != id || json.Unmarshal([]byte(list), &groups) != nil {
		return nil, false
	}
	return groups, true
}
