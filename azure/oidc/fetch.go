package oidc

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// fetchTimeout bounds one fetch of the discovery document and the keys.
const fetchTimeout = 10 * time.Second

// maxDocumentBytes bounds the discovery document and the JWKS; Entra's are
// a few KB.
const maxDocumentBytes = 1 << 20

// discovery is what the verifier reads of an OpenID discovery document.
type discovery struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// refresh fetches the keys again unless a fetch was tried less than
// MinRefetchInterval ago (successful or not, so a failing issuer is not
// hammered either). Callers that waited for another's fetch use its keys.
func (v *Verifier) refresh(ctx context.Context) error {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	v.mu.RLock()
	last, have := v.fetched, len(v.keys) > 0
	v.mu.RUnlock()
	if !last.IsZero() && v.now().Sub(last) < MinRefetchInterval {
		if have {
			return nil
		}
		return ErrKeysUnavailable
	}
	keys, err := v.fetchKeys(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.fetched = v.now()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
	}
	v.keys = keys
	return nil
}

// fetchKeys reads the discovery document, checks that it names the
// issuer (OpenID Connect Discovery 1.0 §4.3), and reads its jwks_uri. The
// fetch outlives the request that caused it (its keys serve every later
// one) but not fetchTimeout.
func (v *Verifier) fetchKeys(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	var doc discovery
	if err := v.getJSON(ctx, strings.TrimSuffix(v.issuer, "/")+"/.well-known/openid-configuration", &doc); err != nil {
		return nil, err
	}
	if doc.Issuer != v.issuer {
		return nil, fmt.Errorf("the discovery document names issuer %q", truncate(doc.Issuer, 256))
	}
	if err := CheckIssuer(doc.JWKSURI); err != nil {
		return nil, fmt.Errorf("jwks_uri: %v", err)
	}
	var set KeySet
	if err := v.getJSON(ctx, doc.JWKSURI, &set); err != nil {
		return nil, err
	}
	keys := make(map[string]*rsa.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		if pub, err := k.RSAPublicKey(); err == nil {
			keys[k.KeyID] = pub
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s lists no RSA signing key", doc.JWKSURI)
	}
	return keys, nil
}

func (v *Verifier) getJSON(ctx context.Context, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("GET %s: %v", url, err)
	case len(body) > maxDocumentBytes:
		return fmt.Errorf("GET %s: over %d bytes", url, maxDocumentBytes)
	case json.Unmarshal(body, into) != nil:
		return fmt.Errorf("GET %s: not a JSON document of the expected shape", url)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
