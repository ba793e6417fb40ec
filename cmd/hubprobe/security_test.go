package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"golang.org/x/crypto/bcrypt"
)

const knownSecret = "hp-test-secret-7f3a9c1e"

// serverlessTargets adds a service reached by a connection string whose
// access key is the secret (its tokens go to the refusing hub at addr), and
// an embedded hub whose access key is the secret, with a REST scenario each.
func serverlessTargets(cfg, addr string) string {
	targets := `  - name: service
    connection_string: "Endpoint=http://` + addr + `;AccessKey=${HP_TOKEN};Version=1.0;"
    hub: chat
  - name: local-service
    embedded: true
    mode: serverless
    embedded_hub:
      access_key: ${HP_TOKEN}
scenarios:`
	rest := `
  - {name: rest, target: service, kind: rest_broadcast, schedule: "@every 1h", duration: 1s, connections: 2, send_interval: 200ms}
  - {name: rest-local, target: local-service, kind: rest_broadcast, schedule: "@every 1h", duration: 1s, connections: 2, send_interval: 200ms}
`
	return strings.Replace(cfg, "scenarios:", targets, 1) + rest
}

// refusingHub answers every request 401 and notes whether it was sent the
// secret as a bearer token and a token signed with the secret.
type refusingHub struct {
	addr                string
	mu                  sync.Mutex
	sawToken, sawSigned bool
}

func startRefusingHub(t *testing.T) *refusingHub {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &refusingHub{addr: l.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(h.serve)}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return h
}

func (h *refusingHub) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.sawToken = h.sawToken || r.Header.Get("Authorization") == "Bearer "+knownSecret
	bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	_, err := azure.VerifyToken([]byte(knownSecret), bearer, "http://"+h.addr+"/client/?hub=chat", time.Now())
	h.sawSigned = h.sawSigned || err == nil
	h.mu.Unlock()
	// A refusing hub: every error path that could echo the request runs.
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = io.WriteString(w, `{"error":"unauthorized"}`)
}

// runOutputs runs the echo and REST scenarios of the config at path once at
// debug level, and `check` on it, keeping what each prints in outputs.
func runOutputs(t *testing.T, path string, outputs map[string]string) {
	t.Helper()
	code, out, errOut := runCLI(t, context.Background(), "--log.level=debug", "run", "--config.file", path, "--scenario", "echo")
	outputs["run text stdout"], outputs["run text stderr"] = out, errOut
	if code != exitFailed {
		t.Fatalf("run against a refusing hub exited %d, want 1", code)
	}
	_, out, errOut = runCLI(t, context.Background(), "--log.level=debug", "run", "--config.file", path, "--scenario", "echo", "--output", "json")
	outputs["run json stdout"], outputs["run json stderr"] = out, errOut
	_, out, errOut = runCLI(t, context.Background(), "check", "--config.file", path)
	outputs["check"] = out + errOut
	for _, name := range []string{"rest", "rest-local"} {
		_, out, errOut = runCLI(t, context.Background(), "--log.level=debug", "run", "--config.file", path, "--scenario", name)
		outputs["run "+name+" stdout"], outputs["run "+name+" stderr"] = out, errOut
	}
	if !strings.Contains(outputs["run rest-local stdout"], "Result: PASS") {
		t.Errorf("the REST run against the embedded hub keyed with the secret did not pass:\n%s", outputs["run rest-local stdout"])
	}
}

// serveOutputs runs the daemon on the config at path until a run failed,
// and keeps its pages and log in outputs.
func serveOutputs(t *testing.T, path string, outputs map[string]string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serving, web := runOnFreePort(t, ctx, "a failed run on the status page", 15*time.Second,
		[]string{"--log.level=debug", "--config.file", path}, "--web.listen-address", func(web string) bool {
			return strings.Contains(get(t, "http://"+web+"/status.json"), "failed")
		})
	for _, page := range []string{"/metrics", "/", "/status.json"} {
		outputs["serve "+page] = get(t, "http://"+web+page)
	}
	cancel()
	<-serving.done
	outputs["serve log"] = serving.log.String()
}

// Scenario runs with an access token, a connection string and an embedded
// hub's access key at debug level: the token and tokens signed with the key
// reach the hub, and no output of hubprobe ever contains the secret.
func TestSecretsNeverAppearInAnyOutput(t *testing.T) {
	hub := startRefusingHub(t)
	cfg := strings.NewReplacer("embedded: true", "url: http://"+hub.addr+"/signalrbench\n    access_token: ${HP_TOKEN}").Replace(quickEcho)
	path := writeConfig(t, serverlessTargets(cfg, hub.addr))
	t.Setenv("HP_TOKEN", knownSecret)

	outputs := map[string]string{}
	runOutputs(t, path, outputs)
	serveOutputs(t, path, outputs)

	hub.mu.Lock()
	defer hub.mu.Unlock()
	if !hub.sawToken || !hub.sawSigned {
		t.Fatalf("the hub received the bearer token: %v, a token signed with the access key: %v; the test proves nothing", hub.sawToken, hub.sawSigned)
	}
	for name, text := range outputs {
		if strings.Contains(text, knownSecret) {
			t.Errorf("%s contains the access token", name)
		}
	}
	if !strings.Contains(outputs["serve log"], "run failed") {
		t.Errorf("debug log has no run failure; was anything logged?\n%s", outputs["serve log"])
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// --web.config.file brings TLS and basic auth to every endpoint.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	mustWrite(t, filepath.Join(dir, "cert.pem"), certPEM)
	mustWrite(t, filepath.Join(dir, "key.pem"), keyPEM)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  ops: " + string(hash) + "\n"
	mustWrite(t, filepath.Join(dir, "web.yml"), []byte(webCfg))

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	status := func(addr, path, user, pass string) int {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serving, addr := runOnFreePort(t, ctx, "the TLS listener", 10*time.Second,
		[]string{"--config.file", writeConfig(t, quickEcho), "--web.config.file", filepath.Join(dir, "web.yml")}, "--web.listen-address",
		func(addr string) bool { return status(addr, "/-/healthy", "ops", "s3cret") == 200 })
	for _, path := range []string{"/metrics", "/", "/status.json", "/-/healthy"} {
		if got := status(addr, path, "", ""); got != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d, want 401", path, got)
		}
		if got := status(addr, path, "ops", "wrong"); got != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: %d, want 401", path, got)
		}
		if got := status(addr, path, "ops", "s3cret"); got != http.StatusOK {
			t.Errorf("%s with credentials: %d, want 200", path, got)
		}
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served /metrics while TLS is configured")
		}
	}
	cancel()
	<-serving.done
}

func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "hubprobe-test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
