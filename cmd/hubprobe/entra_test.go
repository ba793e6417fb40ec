package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/azure/entratest"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// `hubprobe hub --entra.issuer --disable-local-auth`, as a process that
// trusts the loopback tenant through SSL_CERT_FILE: access-key tokens get
// 401 with the service's wording, an Entra token sends and gets a client
// token that connects.
func TestHubCommandTakesEntraTokens(t *testing.T) {
	rig := entratest.New(t, entratest.Options{})
	keyFile := filepath.Join(t.TempDir(), "key")
	mustWrite(t, keyFile, []byte("hub-flag-key\n"))
	addr := startHubEnv(t, []string{"SSL_CERT_FILE=" + rig.CAFile()},
		"--access-key-file", keyFile, "--entra.issuer", rig.Issuer(), "--disable-local-auth")
	origin := "http://" + addr
	keyed, err := azure.MintToken([]byte("hub-flag-key"), azure.TokenClaims{Audience: origin + "/api/v1/hubs/signalrbench", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := post(t, origin+"/api/v1/hubs/signalrbench", keyed); status != http.StatusUnauthorized || body != hub.LocalAuthDisabledText {
		t.Errorf("access-key token: %d %q, want 401 %q", status, body, hub.LocalAuthDisabledText)
	}
	bearer := rig.Token(t, "0f1e2d3c-4b5a-4697-8877-665544332211", hub.SignalRResource)
	status, body := post(t, origin+"/api/hubs/signalrbench/:generateToken?api-version=2024-12-01&userId=u1", bearer)
	var generated struct{ Token string }
	if status != http.StatusOK || json.Unmarshal([]byte(body), &generated) != nil {
		t.Fatalf(":generateToken with an Entra token: %d %s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := signalrclient.Dial(ctx, signalrclient.Options{URL: origin + "/client/?hub=signalrbench", AccessToken: generated.Token})
	if err != nil {
		t.Fatalf("a client with the generated token: %v", err)
	}
	defer c.Close(context.Background())
	if status, body := post(t, origin+"/api/v1/hubs/signalrbench", bearer); status != http.StatusAccepted {
		t.Errorf("REST send with an Entra token: %d %s", status, body)
	}
}

func TestHubCommandRefusesLocalAuthOffWithoutIssuer(t *testing.T) {
	code, _, errOut := runCLI(t, context.Background(), "hub", "--listen", freePort(t), "--disable-local-auth")
	if code != exitUsage || !strings.Contains(errOut, "needs an Entra issuer") {
		t.Errorf("--disable-local-auth alone: exit %d, stderr %q; want exit 2", code, errOut)
	}
}

// post sends a REST message with a bearer token.
func post(t *testing.T, url, bearer string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"target":"RecordLatency","arguments":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}
