package webpubsub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const signaturePrefix = "sha256="

// Sign returns the ce-signature value the service sends for connectionID:
// "sha256=" and the hex HMAC-SHA256 of the connection id under each access
// key (the key string's UTF-8 bytes), comma-separated in key order.
func Sign(connectionID string, keys ...string) string {
	var b strings.Builder
	for i, key := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(signaturePrefix)
		b.WriteString(hex.EncodeToString(mac(key, connectionID)))
	}
	return b.String()
}

func mac(key, connectionID string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(connectionID))
	return m.Sum(nil)
}

// VerifySignature reports whether the ce-signature value holds a signature
// of connectionID under one of keys. Entries are separated by commas with
// optional spaces; hex of either case is accepted. The comparison takes the
// same time wherever a forged signature differs. No keys verify nothing.
func VerifySignature(signature, connectionID string, keys []string) bool {
	if len(keys) == 0 {
		return false
	}
	macs := make([][]byte, len(keys))
	for i, key := range keys {
		macs[i] = mac(key, connectionID)
	}
	for entry := range strings.SplitSeq(signature, ",") {
		entry = strings.TrimSpace(entry)
		if len(entry) < len(signaturePrefix) || !strings.EqualFold(entry[:len(signaturePrefix)], signaturePrefix) {
			continue
		}
		got, err := hex.DecodeString(entry[len(signaturePrefix):])
		if err != nil {
			continue
		}
		for _, want := range macs {
			if hmac.Equal(got, want) {
				return true
			}
		}
	}
	return false
}
