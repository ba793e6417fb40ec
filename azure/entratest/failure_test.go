package entratest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

func TestSignInFailuresNameTheCodeNotTheSecret(t *testing.T) {
	s := newTestServer(t, 0)
	wrongFile := filepath.Join(t.TempDir(), "token")
	const wrongAssertion = "eyJhbGciOiJSUzI1NiJ9.someone-elses-assertion.sig"
	if err := os.WriteFile(wrongFile, []byte(wrongAssertion), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, code, hidden string
		cred               azcore.TokenCredential
	}{
		{"wrong secret", "AADSTS7000215", "wrong-" + testSecret, secretCredential(t, s, testClient, "wrong-"+testSecret)},
		{"unknown client", "AADSTS700016", testSecret, secretCredential(t, s, "11111111-2222-4333-8444-555555555555", testSecret)},
		{"wrong assertion", "AADSTS700211", wrongAssertion, workloadCredential(t, s, testFedClient, wrongFile)},
		{"assertion for a secret client", "AADSTS700211", testAssertion, workloadCredential(t, s, testClient, s.WriteTokenFile(t, testFedClient))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := getToken(t, c.cred)
			if err == nil {
				t.Fatal("signed in")
			}
			if msg := err.Error(); !strings.Contains(msg, c.code) || strings.Contains(msg, c.hidden) {
				t.Errorf("error %q: want %s and not the credential presented", msg, c.code)
			}
		})
	}
	if got := s.TokenRequests(); got != 0 {
		t.Errorf("TokenRequests = %d, want 0", got)
	}
}

func TestErrorAnswerIsEntras(t *testing.T) {
	s := newTestServer(t, 0)
	form := url.Values{"client_id": {testClient}, "client_secret": {"nope-" + testSecret},
		"grant_type": {"client_credentials"}, "scope": {testResource + "/.default"}}
	req, _ := http.NewRequest(http.MethodPost, s.AuthorityHost()+s.Tenant()+"/oauth2/v2.0/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("client-request-id", "5fc87507-4086-4e77-b415-cee677eb232e")
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body errorResponse
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized || body.Error != "invalid_client" ||
		len(body.Codes) != 1 || body.Codes[0] != 7000215 ||
		!strings.HasPrefix(body.Description, "AADSTS7000215: Invalid client secret provided.") ||
		body.CorrelationID != "5fc87507-4086-4e77-b415-cee677eb232e" || body.TraceID == "" || body.Timestamp == "" {
		t.Errorf("answer %d %s, want 401 invalid_client [7000215] with the request's correlation id", resp.StatusCode, raw)
	}
	if strings.Contains(string(raw), testSecret) {
		t.Errorf("answer echoes the secret: %s", raw)
	}
}

func TestRequestFailures(t *testing.T) {
	s := newTestServer(t, 0)
	base := url.Values{"client_id": {testClient}, "client_secret": {testSecret},
		"grant_type": {"client_credentials"}, "scope": {testResource + "/.default"}}
	cases := []struct {
		name, key, value string
		status, code     int
	}{
		{"no client", "client_id", "", 400, 900144},
		{"password grant", "grant_type", "password", 400, 70003},
		{"scope without .default", "scope", testResource, 400, 1002012},
		{"no credential", "client_secret", "", 401, 7000218},
	}
	for _, c := range cases {
		form := url.Values{}
		for k, v := range base {
			form[k] = v
		}
		form.Set(c.key, c.value)
		status, codes := postForm(t, s, s.Tenant(), form)
		if status != c.status || len(codes) != 1 || codes[0] != c.code {
			t.Errorf("%s: %d %v, want %d [%d]", c.name, status, codes, c.status, c.code)
		}
	}
	if status, codes := postForm(t, s, newGUID(), base); status != 400 || len(codes) != 1 || codes[0] != 90002 {
		t.Errorf("another tenant: %d %v, want 400 [90002]", status, codes)
	}
}

func postForm(t *testing.T, s *Server, tenant string, form url.Values) (int, []int) {
	t.Helper()
	resp, err := s.HTTPClient().PostForm(s.AuthorityHost()+tenant+"/oauth2/v2.0/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body errorResponse
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body.Codes
}
