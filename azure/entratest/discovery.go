package entratest

import (
	"encoding/json"
	"net/http"

	"github.com/hubprobe/hubprobe/azure/oidc"
)

// openIDConfiguration is the tenant's discovery document: the members MSAL
// requires (issuer, authorization_endpoint, token_endpoint), jwks_uri for
// verifiers, and a few Entra always lists.
type openIDConfiguration struct {
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	JWKSURI               string   `json:"jwks_uri"`
	AuthMethods           []string `json:"token_endpoint_auth_methods_supported"`
	SigningAlgorithms     []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypes         []string `json:"response_types_supported"`
	SubjectTypes          []string `json:"subject_types_supported"`
	TenantRegionScope     *string  `json:"tenant_region_scope"`
}

func (s *Server) serveOpenIDConfiguration(w http.ResponseWriter, r *http.Request) {
	if !s.checkTenant(w, r) {
		return
	}
	base := s.AuthorityHost() + s.tenant
	writeJSON(w, http.StatusOK, openIDConfiguration{
		Issuer:                s.Issuer(),
		AuthorizationEndpoint: base + "/oauth2/v2.0/authorize",
		TokenEndpoint:         base + "/oauth2/v2.0/token",
		JWKSURI:               base + "/discovery/v2.0/keys",
		AuthMethods:           []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
		SigningAlgorithms:     []string{"RS256"},
		ResponseTypes:         []string{"code", "id_token", "code id_token", "id_token token"},
		SubjectTypes:          []string{"pairwise"},
	})
}

func (s *Server) serveKeys(w http.ResponseWriter, r *http.Request) {
	if !s.checkTenant(w, r) {
		return
	}
	s.keyRequests.Add(1)
	s.mu.Lock()
	keys := make([]oidc.JSONWebKey, 0, len(s.keys))
	for _, k := range s.keys {
		keys = append(keys, k.jwk(s.Issuer()))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, oidc.KeySet{Keys: keys})
}

// checkTenant answers a request for another tenant as Entra does, with
// AADSTS90002, and says whether the request may go on.
func (s *Server) checkTenant(w http.ResponseWriter, r *http.Request) bool {
	tenant := r.PathValue("tenant")
	if tenant == s.tenant {
		return true
	}
	s.writeError(w, r, failure{
		status:      http.StatusBadRequest,
		code:        "invalid_tenant",
		aadsts:      90002,
		description: "Tenant '" + tenant + "' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.",
	})
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store, no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
