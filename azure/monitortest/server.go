// Package monitortest serves Azure Monitor's metrics API on a loopback TLS
// listener, so that the real armmonitor client (and azidentity, through
// the App Service managed identity endpoint it also serves) can be tested
// without Azure. It speaks the public wire format: GET
// {resource id}/providers/Microsoft.Insights/metrics with metricnames,
// aggregation, interval, timespan, $filter, ValidateDimensions and top;
// answers with value[].name.value, timeseries[].metadatavalues and
// data[].timeStamp/maximum/total; refuses as Azure does (a flat
// {"code","message"} for a metric the resource does not have, a wrapped
// {"error":{…}} for the rest). No product code imports it.
package monitortest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/localtest"
)

// Server is the fake Resource Manager: the metrics API over TLS at URL,
// and an App Service managed identity endpoint over plain HTTP at
// IdentityEndpoint whose tokens it accepts.
type Server struct {
	// URL is the Resource Manager endpoint: https://127.0.0.1:port.
	URL string
	// Client trusts the server's certificate.
	Client *http.Client
	// CAFile holds the certificate in PEM, for SSL_CERT_FILE.
	CAFile string
	// IdentityEndpoint and IdentityHeader are what App Service sets as
	// IDENTITY_ENDPOINT and IDENTITY_HEADER.
	IdentityEndpoint, IdentityHeader string
	identityClient                   *http.Client

	mu        sync.Mutex
	resources map[string]*resource // by lower-cased id
	answers   []Answer
	requests  []Request
	tokens    map[string]string // token → resource it was issued for
	accepted  func(token string) bool
}

// Request is one metrics request the server received.
type Request struct {
	At     time.Time
	Path   string
	Query  map[string]string
	Bearer string // the token of the Authorization header
	Status int    // what the server answered
}

// Answer is a scripted answer, served instead of the metrics to the next
// authorized request.
type Answer struct {
	Status int
	Header http.Header
	Body   string
}

// New starts a server; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{resources: map[string]*resource{}, tokens: map[string]string{}, IdentityHeader: randomHex()}
	api := newAPI(t, http.HandlerFunc(s.serveMetrics))
	identity := localtest.Server(t, http.HandlerFunc(s.serveIdentity))
	s.URL, s.Client = api.URL, api.Client()
	s.IdentityEndpoint, s.identityClient = identity.URL+"/msi/token", identity.Client()
	s.CAFile = filepath.Join(t.TempDir(), "monitortest-ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: api.Certificate().Raw})
	if err := os.WriteFile(s.CAFile, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// usedURLs are the metrics API URLs of every Server this process made.
// azidentity keeps managed identity tokens in one cache per process
// (MSAL's), keyed by their audience, which is the server's URL here: a
// server on the port of an earlier one would be sent the earlier server's
// token, which it never issued, and a test of a failing sign-in would not
// sign in at all.
var usedURLs sync.Map

// newAPI serves handler over TLS on a URL no earlier Server had. A server
// on a used port stays open until the test ends, so the next try gets
// another.
func newAPI(t testing.TB, handler http.Handler) *httptest.Server {
	for {
		api := localtest.TLSServer(t, handler)
		if _, used := usedURLs.LoadOrStore(api.URL, true); !used {
			return api
		}
	}
}

// Accept makes the server take bearer tokens for which accept is true too,
// such as those of another test issuer; its own managed identity tokens
// stay accepted.
func (s *Server) Accept(accept func(token string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted = accept
}

// Respond queues answers for the next authorized requests, in order.
func (s *Server) Respond(answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, answers...)
}

// Requests lists the metrics requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TokenResource says which resource the server issued token for; false for
// a token it did not issue.
func (s *Server) TokenResource(token string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tokens[token]
	return r, ok
}

// serveIdentity answers as App Service's managed identity endpoint does.
func (s *Server) serveIdentity(w http.ResponseWriter, r *http.Request) {
	resource := r.URL.Query().Get("resource")
	if r.Header.Get("X-IDENTITY-HEADER") != s.IdentityHeader || resource == "" {
		http.Error(w, `{"statusCode":400,"message":"Unable to load the proper Managed Identity."}`, http.StatusBadRequest)
		return
	}
	token := "monitortest-" + randomHex()
	s.mu.Lock()
	s.tokens[token] = resource
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":%q,"expires_on":"%d","resource":%q,"token_type":"Bearer"}`,
		token, time.Now().Add(time.Hour).Unix(), resource)
}

// authorized accepts a token the server issued for its own URL (the
// audience of an endpoint Azure does not know), or one Accept takes.
func (s *Server) authorized(r *http.Request) (token string, ok bool) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if res, issued := s.tokens[token]; issued {
		return token, strings.TrimSuffix(res, "/") == s.URL
	}
	return token, s.accepted != nil && s.accepted(token)
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
