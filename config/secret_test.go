package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const plaintext = "hunter2-plaintext"

func TestSecretNeverPrints(t *testing.T) {
	s := Secret(plaintext)
	c := &Config{Targets: []Target{{Name: "t", URL: "http://h/", AccessToken: s}}}
	outputs := map[string]string{}
	for _, verb := range []string{"%v", "%s", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s"} {
		outputs["secret "+verb] = fmt.Sprintf(verb, s)
		outputs["config "+verb] = fmt.Sprintf(verb, c)
		outputs["target "+verb] = fmt.Sprintf(verb, c.Targets[0])
	}
	outputs["Sprint"] = fmt.Sprint(s, c.Targets)
	y, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs["yaml"] = string(y)
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outputs["json"] = string(j)
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "token", s, "target", c.Targets[0])
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "token", s, "config", c)
	outputs["slog"] = logged.String()

	for name, out := range outputs {
		if strings.Contains(out, plaintext) || strings.Contains(out, fmt.Sprintf("%x", plaintext)) {
			t.Errorf("%s leaks the secret: %s", name, out)
		}
		if !strings.Contains(out, "<secret>") && !strings.Contains(out, `\u003csecret\u003e`) {
			t.Errorf("%s does not show the mask: %s", name, out)
		}
	}
	if string(s) != plaintext {
		t.Error("string conversion must give the real value")
	}
	if got := Secret("").String(); got != "" {
		t.Errorf("empty secret prints %q, want empty", got)
	}
}

func TestAccessTokenEnvExpansion(t *testing.T) {
	t.Setenv("HUBPROBE_TEST_A", "aa")
	t.Setenv("HUBPROBE_TEST_B", "bb")
	t.Setenv("HUBPROBE_TEST_EMPTY", "")
	tests := []struct{ token, want, wantErr string }{
		{"${HUBPROBE_TEST_A}", "aa", ""},
		{"x-${HUBPROBE_TEST_A}.${HUBPROBE_TEST_B}-y", "x-aa.bb-y", ""},
		{"$HUBPROBE_TEST_A", "$HUBPROBE_TEST_A", ""}, // only the braced form expands
		{"p$$w${", "p$$w${", ""},
		{"${HUBPROBE_TEST_EMPTY}", "", "s.yml:4: targets[0].access_token: is empty after expanding environment variables"},
		{"${HUBPROBE_TEST_NOT_SET}", "", `s.yml:4: targets[0].access_token: environment variable "HUBPROBE_TEST_NOT_SET" is not set`},
	}
	for _, tt := range tests {
		data := strings.Replace(minimalBody, "    url:", "    access_token: '"+tt.token+"'\n    url:", 1)
		c, err := Parse([]byte(data), "s.yml", nil)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%q: got error %v, want %s", tt.token, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.token, err)
			continue
		}
		if got := string(c.Targets[0].AccessToken); got != tt.want {
			t.Errorf("%q expanded to %q, want %q", tt.token, got, tt.want)
		}
	}
}

// ${ENV} is expanded in secrets only: other values are taken literally.
func TestNoEnvExpansionOutsideSecrets(t *testing.T) {
	t.Setenv("HUBPROBE_TEST_A", "aa")
	data := strings.Replace(minimalBody, "    url:", "    headers:\n      X-A: ${HUBPROBE_TEST_A}\n    url:", 1)
	c, err := Parse([]byte(data), "s.yml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Targets[0].Headers["X-A"]; got != "${HUBPROBE_TEST_A}" {
		t.Errorf("header value %q, want it literal", got)
	}
}

func TestAccessTokenFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "secrets", "token"), "  "+plaintext+"\n")
	absFile := filepath.Join(dir, "abs-token")
	writeFile(t, absFile, plaintext+"-abs")
	for _, tt := range []struct{ ref, wantPath, wantToken string }{
		{"secrets/token", filepath.Join(dir, "secrets", "token"), plaintext},
		{absFile, absFile, plaintext + "-abs"},
	} {
		cfgPath := filepath.Join(dir, "config.yml")
		writeFile(t, cfgPath, strings.Replace(minimalBody, "    url:", "    access_token_file: "+tt.ref+"\n    url:", 1))
		c, err := Load(cfgPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		tg := c.Targets[0]
		if string(tg.AccessToken) != tt.wantToken || tg.AccessTokenFile != tt.wantPath {
			t.Errorf("%s: token %q from %q, want %q from %q", tt.ref, string(tg.AccessToken), tg.AccessTokenFile, tt.wantToken, tt.wantPath)
		}
	}
}

// Errors about a token file name it but never show what it holds.
func TestAccessTokenFileErrorsDoNotLeak(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "token"), plaintext)
	writeFile(t, filepath.Join(dir, "big"), strings.Repeat(plaintext, maxSecretFileSize/len(plaintext)+1))
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		// a valid token followed by a broken scenario
		"token\nscenarios:\n  - name: x\n    kind: echo\n    connections: 0": `scenarios[0].connections: must be between 1 and 100000, got 0`,
		"big":  `targets[0].access_token_file: cannot read "big": larger than 65536 bytes`,
		"adir": `targets[0].access_token_file: cannot read "adir": not a regular file`,
	}
	for ref, want := range tests {
		data := "targets:\n  - name: t\n    url: http://h/\n    access_token_file: " + ref + "\n"
		cfgPath := filepath.Join(dir, "config.yml")
		writeFile(t, cfgPath, data)
		_, err := Load(cfgPath, nil)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), plaintext) {
			t.Errorf("%q: got %v, want %s and no secret", ref, err, want)
		}
	}
}

// A URL's query may carry a token; errors about the URL must not echo it.
func TestURLErrorsDoNotEchoTheURL(t *testing.T) {
	for _, u := range []string{"http://h:bad/?access_token=" + plaintext, "ftp://h/?access_token=" + plaintext, "http:///?access_token=" + plaintext} {
		data := strings.Replace(minimalBody, "ws://127.0.0.1:1/hub", u, 1)
		_, err := Parse([]byte(data), "u.yml", nil)
		if err == nil || strings.Contains(err.Error(), plaintext) {
			t.Errorf("%s: got %v, want an error without the token", u, err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Header values may hold credentials: no error about a header quotes one,
// whether the value itself is refused or the header clashes with another.
func TestHeaderErrorsDoNotQuoteValues(t *testing.T) {
	target := "targets:\n  - name: local\n    url: ws://127.0.0.1:1/hub\n"
	scenarios := "scenarios:\n  - name: echo\n    kind: echo\n"
	tests := []struct{ target, want string }{
		{target + `    headers: {X-Probe: "` + plaintext + `\r"}`, `targets[0].headers.X-Probe: value must not contain line breaks or NUL`},
		{target + `    headers: {X-Probe: "` + plaintext + `\nX-Injected: 1"}`, `targets[0].headers.X-Probe: value must not contain line breaks or NUL`},
		{target + `    headers: {X-Probe: "` + plaintext + `\0"}`, `targets[0].headers.X-Probe: value must not contain line breaks or NUL`},
		{target + `    headers: {X-Probe: "` + plaintext + `", x-probe: "` + plaintext + `"}`, `targets[0].headers.x-probe: duplicate header "x-probe" (also written as "X-Probe")`},
		{target + "    access_token: t0k\n" + `    headers: {Authorization: "Bearer ` + plaintext + `"}`, `targets[0].headers.Authorization: conflicts with access_token`},
		{"targets:\n  - name: local\n    mode: serverless\n    hub: chat\n" +
			`    connection_string: "Endpoint=https://x.service.signalr.net;AccessKey=k;Version=1.0;"` + "\n" +
			`    headers: {Authorization: "Bearer ` + plaintext + `"}`, `targets[0].headers.Authorization: not allowed with mode: serverless`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.target+"\n"+scenarios), "h.yml", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), plaintext) {
			t.Errorf("%q: got %v, want %s and no header value", tt.target, err, tt.want)
		}
	}
}
