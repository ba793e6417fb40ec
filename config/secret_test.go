package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
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

var (
	// accessKeyValue finds the AccessKey of a connection string.
	accessKeyValue = regexp.MustCompile(`(?i)AccessKey=([^;"\s]+)`)
	// embeddedAccessKey finds an embedded hub's access_key written inline.
	embeddedAccessKey    = regexp.MustCompile(`access_key:\s*([^\s$]\S*)`)
	connectionStringFile = regexp.MustCompile(`connection_string_file:\s*(\S+)`)
)

// accessKeysIn returns the access keys a fixture holds: in its connection
// strings, inline or in the file it names, and its embedded hub's.
func accessKeysIn(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, m := range connectionStringFile.FindAllStringSubmatch(text, -1) {
		if file, err := os.ReadFile(filepath.Join(filepath.Dir(path), m[1])); err == nil {
			text += "\n" + string(file)
		}
	}
	var keys []string
	for _, re := range []*regexp.Regexp{accessKeyValue, embeddedAccessKey} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// fixturesWithAccessKeys is how many testdata/invalid-*.yml hold an access
// key, so the sweep below cannot silently check none.
const fixturesWithAccessKeys = 16

// No config error quotes an access key, whatever else is wrong with the
// target that holds it.
func TestInvalidConfigsNeverQuoteAnAccessKey(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid-*.yml")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		keys := accessKeysIn(t, path)
		if len(keys) == 0 {
			continue
		}
		checked++
		_, err := Load(path, testKinds)
		if err == nil {
			t.Errorf("Load(%s) succeeded, want error", path)
			continue
		}
		for _, k := range keys {
			if strings.Contains(err.Error(), k) {
				t.Errorf("%s: error quotes the access key %q: %v", path, k, err)
			}
		}
	}
	if checked != fixturesWithAccessKeys {
		t.Errorf("%d fixtures hold an access key, want %d", checked, fixturesWithAccessKeys)
	}
}

// Every way a connection string can fail to parse is reported by key name
// only, whether it is written inline, through ${ENV} or in a file: the
// access key, run together with a neighbour or not, never appears.
func TestConnectionStringErrorsNeverQuoteTheAccessKey(t *testing.T) {
	const key = "s3cr3t-access-key"
	k := ";AccessKey=" + key
	tests := []struct{ cs, want string }{
		{"Endpoint=ftp://x.net" + k, "Endpoint must be an http:// or https:// URL"},
		{"Endpoint=https://x.net," + key + k, "Endpoint has an invalid host name"},
		{"Endpoint=https://x.net AccessKey=" + key, "Endpoint is not a valid URL"},
		{"Endpoint=https://user:" + key + "@x.net" + k, "Endpoint must not contain user information"},
		{"Endpoint=https://x.net/?key=" + key + k, "Endpoint must not have a query or fragment"},
		{"Endpoint=https://x.net;Port=" + key + k, "Port must be a number from 1 to 65535"},
		{"Endpoint=https://x.net;Version=1.0 " + key + k, "Version is not supported (want 1.x)"},
		{"Endpoint=https://x.net" + k + ";accesskey=" + key, "AccessKey appears more than once"},
		{"Endpoint=https://x.net;ClientEndpoint=wss://c.net" + k, "ClientEndpoint must be an http:// or https:// URL"},
		{"Endpoint=https://x.net;AuthType=azure.msi;ClientSecret=" + key, "ClientSecret is not used with AuthType=azure.msi"},
		{"Endpoint=https://x.net;AuthType=azure.app;ClientId=c;TenantId=t;ClientSecret=;AccessKey=" + key, "AccessKey is not used with an AuthType: remove one of them"},
		{"Endpoint=http://x.net;AuthType=azure.app;ClientId=c;TenantId=t;ClientSecret=" + key, "Endpoint must be https:// with an AuthType (http:// only to a loopback address): it carries Entra ID tokens"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Setenv("HUBPROBE_TEST_CONNECTION_STRING", tt.cs)
		writeFile(t, filepath.Join(dir, "cs.txt"), tt.cs)
		for _, src := range []struct{ key, line string }{
			{"connection_string", `connection_string: "` + tt.cs + `"`},
			{"connection_string", "connection_string: ${HUBPROBE_TEST_CONNECTION_STRING}"},
			{"connection_string_file", "connection_string_file: cs.txt"},
		} {
			path := filepath.Join(dir, "config.yml")
			writeFile(t, path, "targets:\n  - name: azure\n    hub: chat\n    "+src.line+"\n"+
				"scenarios:\n  - name: push\n    kind: rest_broadcast\n")
			_, err := Load(path, testKinds)
			want := "targets[0]." + src.key + ": " + tt.want
			if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), key) {
				t.Errorf("%s %q: got %v, want …%s and no access key", src.line, tt.cs, err, want)
			}
		}
	}
}
