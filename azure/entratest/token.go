package entratest

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
)

// clientAssertionType is the client_assertion_type of a federated
// (workload identity) sign-in.
const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// maxFormBytes bounds a token request's body; MSAL's are well under 8 KB.
const maxFormBytes = 64 << 10

// tokenResponse is a successful client-credentials answer.
type tokenResponse struct {
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	ExtExpiresIn int64  `json:"ext_expires_in"`
	AccessToken  string `json:"access_token"`
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if !s.checkTenant(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.writeError(w, r, failure{http.StatusBadRequest, "invalid_request", 900144,
			"The request body must contain the following parameter: 'grant_type'."})
		return
	}
	clientID, resource, fail := s.authenticate(r)
	if fail != nil {
		s.writeError(w, r, *fail)
		return
	}
	token, err := s.mint(Claims{ClientID: clientID, Audience: resource}, s.signer())
	if err != nil {
		s.writeError(w, r, failure{http.StatusInternalServerError, "server_error", 90033, "A transient error has occurred: " + err.Error()})
		return
	}
	s.tokenRequests.Add(1)
	lifetime := int64(s.opts.TokenLifetime / time.Second)
	writeJSON(w, http.StatusOK, tokenResponse{"Bearer", lifetime, lifetime, token})
}

// authenticate checks a client-credentials request, in the order Entra
// reports its failures, and returns the client and the resource the token
// is for.
func (s *Server) authenticate(r *http.Request) (clientID, resource string, fail *failure) {
	form := r.PostForm
	clientID = form.Get("client_id")
	switch {
	case clientID == "":
		return "", "", &failure{http.StatusBadRequest, "invalid_request", 900144,
			"The request body must contain the following parameter: 'client_id'."}
	case form.Get("grant_type") != "client_credentials":
		return "", "", &failure{http.StatusBadRequest, "unsupported_grant_type", 70003,
			"The app requested an unsupported grant type."}
	}
	resource, ok := resourceOf(form.Get("scope"))
	if !ok {
		return "", "", &failure{http.StatusBadRequest, "invalid_scope", 1002012,
			"The provided value for scope is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI)."}
	}
	return clientID, resource, s.checkCredential(clientID, form.Get("client_secret"), form.Get("client_assertion_type"), form.Get("client_assertion"))
}

// checkCredential compares what the client presented with what it was
// given, in constant time; no failure names the value presented.
func (s *Server) checkCredential(clientID, secret, assertionType, assertion string) *failure {
	wantSecret, hasSecret := s.opts.Secrets[clientID]
	wantAssertion, hasAssertion := s.opts.Federated[clientID]
	switch {
	case !hasSecret && !hasAssertion:
		return &failure{http.StatusBadRequest, "unauthorized_client", 700016,
			"Application with identifier '" + clientID + "' was not found in the directory '" + s.tenant + "'. You may have sent your authentication request to the wrong tenant."}
	case secret != "":
		if hasSecret && equal(secret, wantSecret) {
			return nil
		}
		return &failure{http.StatusUnauthorized, "invalid_client", 7000215,
			"Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '" + clientID + "'."}
	case assertion != "" && assertionType == clientAssertionType:
		if hasAssertion && equal(assertion, wantAssertion) {
			return nil
		}
		return &failure{http.StatusUnauthorized, "invalid_client", 700211,
			"No matching federated identity record found for presented assertion issuer. Please check your federated identity credential Subject, Audience and Issuer against the presented assertion."}
	}
	return &failure{http.StatusUnauthorized, "invalid_client", 7000218,
		"The request body must contain the following parameter: 'client_assertion' or 'client_secret'."}
}

func equal(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// oidcScopes are the scopes MSAL adds to every request; a client
// credentials grant ignores them.
var oidcScopes = map[string]bool{"openid": true, "offline_access": true, "profile": true}

// resourceOf finds the one "<resource>/.default" among the scopes.
func resourceOf(scope string) (string, bool) {
	var resources []string
	for _, s := range strings.Fields(scope) {
		if !oidcScopes[s] {
			resources = append(resources, s)
		}
	}
	if len(resources) != 1 {
		return "", false
	}
	resource, ok := strings.CutSuffix(resources[0], "/.default")
	return resource, ok && resource != ""
}
