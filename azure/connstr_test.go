package azure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// azureTestKey looks like a real access key (base64, with '+', '/', '=').
const azureTestKey = "s3cr3tKEY+b64/value0123456789ABCDEFGHIJ="

func mustParseCS(t testing.TB, s string) ConnectionString {
	t.Helper()
	cs, err := ParseConnectionString(s)
	if err != nil {
		t.Fatalf("ParseConnectionString: %v", err)
	}
	return cs
}

func TestParseConnectionStringAzureForm(t *testing.T) {
	cs := mustParseCS(t, "Endpoint=https://x.service.signalr.net;AccessKey="+azureTestKey+";Version=1.0;")
	checks := map[string][2]string{
		"Endpoint":       {cs.Endpoint(), "https://x.service.signalr.net"},
		"ServerEndpoint": {cs.ServerEndpoint(), "https://x.service.signalr.net"},
		"ClientURL":      {cs.ClientURL("Chat"), "https://x.service.signalr.net/client/?hub=chat"},
		"AccessKey":      {string(cs.AccessKey()), azureTestKey},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	k := cs.AccessKey()
	k[0] = 'X'
	if string(cs.AccessKey()) != azureTestKey {
		t.Error("AccessKey returned the key's own bytes, not a copy")
	}
}

func TestParseConnectionStringIsTolerant(t *testing.T) {
	for _, s := range []string{
		"  endpoint = https://X.service.signalr.net/ ; ACCESSKEY=" + azureTestKey + " ; version=1.0 ;; ",
		"AccessKey=" + azureTestKey + ";Endpoint=https://X.service.signalr.net",
		"Endpoint=https://X.service.signalr.net;stray part;AccessKey=" + azureTestKey + ";Unknown=1;",
		"ENDPOINT=HTTPS://X.service.signalr.net//;accesskey=" + azureTestKey + ";Version=1.23",
	} {
		cs, err := ParseConnectionString(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if cs.Endpoint() != "https://X.service.signalr.net" || string(cs.AccessKey()) != azureTestKey {
			t.Errorf("%q: endpoint %q, key ok %v", s, cs.Endpoint(), string(cs.AccessKey()) == azureTestKey)
		}
	}
}

func TestConnectionStringEndpointsAndPort(t *testing.T) {
	cases := []struct {
		in                       string
		endpoint, server, client string
	}{
		{"Endpoint=https://x.net;AccessKey=k;Port=8443", "https://x.net", "https://x.net:8443", "https://x.net:8443/client/?hub=h"},
		{"Endpoint=http://127.0.0.1:8080/azure/;AccessKey=k", "http://127.0.0.1:8080/azure", "http://127.0.0.1:8080/azure", "http://127.0.0.1:8080/azure/client/?hub=h"},
		{"Endpoint=http://[::1]:80;AccessKey=k;Port=81", "http://[::1]:80", "http://[::1]:81", "http://[::1]:81/client/?hub=h"},
		{
			"Endpoint=https://x.net;AccessKey=k;Port=8443;ClientEndpoint=https://public.example:444/;ServerEndpoint=https://private.example",
			"https://x.net", "https://private.example", "https://public.example:444/client/?hub=h",
		},
	}
	for _, c := range cases {
		cs := mustParseCS(t, c.in)
		if got := cs.Endpoint(); got != c.endpoint {
			t.Errorf("%s: Endpoint %q, want %q", c.in, got, c.endpoint)
		}
		if got := cs.ServerEndpoint(); got != c.server {
			t.Errorf("%s: ServerEndpoint %q, want %q", c.in, got, c.server)
		}
		if got := cs.ClientURL("H"); got != c.client {
			t.Errorf("%s: ClientURL %q, want %q", c.in, got, c.client)
		}
	}
}

func TestParseConnectionStringErrorsNameTheKeyOnly(t *testing.T) {
	k := ";AccessKey=" + azureTestKey
	cases := []struct{ in, key string }{
		{"", csKeyEndpoint},
		{"AccessKey=" + azureTestKey, csKeyEndpoint},
		{"Endpoint=;AccessKey=" + azureTestKey, csKeyEndpoint},
		{"Endpoint=https://x.net", csKeyAccessKey},
		{"Endpoint=https://x.net;AccessKey=", csKeyAccessKey},
		{"Endpoint=https://x.net;AccessKey= ;", csKeyAccessKey},
		{"Endpoint=https://x.net AccessKey=" + azureTestKey, csKeyEndpoint},
		{"Endpoint=https://x.net," + azureTestKey + k, csKeyEndpoint},
		{"Endpoint=ftp://x.net" + k, csKeyEndpoint},
		{"Endpoint=x.net" + k, csKeyEndpoint},
		{"Endpoint=https://user:" + azureTestKey + "@x.net" + k, csKeyEndpoint},
		{"Endpoint=https://x.net/?key=" + azureTestKey + k, csKeyEndpoint},
		{"Endpoint=https://x.net/#" + azureTestKey + k, csKeyEndpoint},
		{"Endpoint=https://%zz" + k, csKeyEndpoint},
		{"Endpoint=https://x.net:99999" + k, csKeyEndpoint},
		{"Endpoint=https://x.net:0" + k, csKeyEndpoint},
		{"Endpoint=https://x.net;Port=0" + k, csKeyPort},
		{"Endpoint=https://x.net;Port=65536" + k, csKeyPort},
		{"Endpoint=https://x.net;Port=" + azureTestKey + k, csKeyPort},
		{"Endpoint=https://x.net;Version=2.0" + k, csKeyVersion},
		{"Endpoint=https://x.net;Version=1." + k, csKeyVersion},
		{"Endpoint=https://x.net;Version=1.0 " + azureTestKey + k, csKeyVersion},
		{"Endpoint=https://x.net" + k + ";accesskey=" + azureTestKey, csKeyAccessKey},
		{"Endpoint=https://x.net;ClientEndpoint=wss://c.net" + k, csKeyClientEndpoint},
		{"Endpoint=https://x.net;ServerEndpoint=https://" + k, csKeyServerEndpoint},
		{"Endpoint=https://x.net;AuthType=azure.msi;ClientSecret=" + azureTestKey, csKeyClientSecret},
		{"Endpoint=https://x.net;AuthType=azure.key;ClientSecret=" + azureTestKey, csKeyAuthType},
		{"Endpoint=https://x.net;AuthType=azure;AccessKey=" + azureTestKey, csKeyAccessKey},
		{"Endpoint=https://x.net;ClientSecret=" + azureTestKey, csKeyClientSecret},
		{"Endpoint=https://x.net;AuthType=azure.app;ClientId=c;TenantId=t;ClientSecret=" + azureTestKey + ";ClientCert=/c.pem", csKeyClientCert},
	}
	for _, c := range cases {
		_, err := ParseConnectionString(c.in)
		var ce *ConnectionStringError
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want a *ConnectionStringError", c.in, err)
			continue
		}
		if ce.Key != c.key {
			t.Errorf("%q: error names %s, want %s (%v)", c.in, ce.Key, c.key, err)
		}
		if strings.Contains(err.Error(), azureTestKey) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: error quotes the key: %v", c.in, err)
		}
	}
}

func TestConnectionStringNeverPrintsTheKey(t *testing.T) {
	cs := mustParseCS(t, "Endpoint=https://x.service.signalr.net;AccessKey="+azureTestKey+";Version=1.0;Port=444;ClientEndpoint=https://c.net;ServerEndpoint=https://s.net")
	type exported struct{ CS ConnectionString }
	type unexported struct{ cs ConnectionString }
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		out = append(out,
			fmt.Sprintf(verb, cs), fmt.Sprintf(verb, &cs),
			fmt.Sprintf(verb, exported{cs}), fmt.Sprintf(verb, unexported{cs}),
			fmt.Sprintf(verb, []ConnectionString{cs}), fmt.Sprintf(verb, map[string]any{"a": cs}))
	}
	out = append(out, cs.String(), cs.GoString(), fmt.Errorf("wrapped: %v", cs).Error())
	js, err := json.Marshal(struct{ CS ConnectionString }{cs})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(js))
	var logBuf bytes.Buffer
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("target", "cs", cs, "ptr", &cs)
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("target", "cs", cs)
	out = append(out, logBuf.String())
	for _, s := range out {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("printed form holds the key: %s", s)
		}
	}
	want := "Endpoint=https://x.service.signalr.net;AccessKey=REDACTED;Version=1.0;Port=444;ClientEndpoint=https://c.net;ServerEndpoint=https://s.net;"
	if cs.String() != want {
		t.Errorf("String() = %s\nwant       %s", cs.String(), want)
	}
	if got := fmt.Sprintf("%#v", cs); !strings.HasPrefix(got, `azure.ConnectionString{Endpoint:"https://x.service.signalr.net", AccessKey:"REDACTED"`) {
		t.Errorf("%%#v = %s", got)
	}
	// The redacted form parses back to the same endpoints.
	back := mustParseCS(t, cs.String())
	if back.ServerEndpoint() != cs.ServerEndpoint() || back.ClientURL("h") != cs.ClientURL("h") {
		t.Errorf("String() does not round-trip: %v", back)
	}
}

func TestZeroConnectionStringIsSafe(t *testing.T) {
	var cs ConnectionString
	if cs.Endpoint() != "" || cs.ServerEndpoint() != "" || cs.AccessKey() != nil {
		t.Errorf("zero value: %v", cs)
	}
	if _, err := ClientToken(cs, "chat", "", 0); err == nil {
		t.Error("ClientToken accepted a zero ConnectionString")
	}
	if _, err := NewRESTClient(cs, "chat", RESTOptions{}); err == nil {
		t.Error("NewRESTClient accepted a zero ConnectionString")
	}
}

func TestAzureEscape(t *testing.T) {
	cases := map[string]string{
		"abc-_.~XYZ09": "abc-_.~XYZ09",
		"a b/c?d#e%f":  "a%20b%2Fc%3Fd%23e%25f",
		"user@x+y=z:;": "user%40x%2By%3Dz%3A%3B",
		"é":            "%C3%A9",
		".":            "%2E",
		"..":           "%2E%2E",
		"a..b":         "a..b",
	}
	for in, want := range cases {
		got := azureEscape(in)
		if got != want {
			t.Errorf("azureEscape(%q) = %q, want %q", in, got, want)
		}
		if back, err := url.PathUnescape(got); err != nil || back != in {
			t.Errorf("%q does not unescape back to %q: %q %v", got, in, back, err)
		}
	}
}

// csErrorProblems lists every Problem text ParseConnectionString may use.
var csErrorProblems = []string{
	"appears more than once", "is missing", "is empty", "is not a valid URL",
	"must be an http:// or https:// URL", "has no host", "has an invalid host name", "has an invalid port",
	"must not contain user information", "must not have a query or fragment",
	"must be a number from 1 to 65535", "is not supported (want 1.x)",
	"is not supported: hubprobe signs tokens with an AccessKey",
	"goes with an AuthType, and the connection string has none",
	"must be azure, azure.msi or azure.app",
	"is not used with an AuthType: remove one of them",
	"must be https:// with an AuthType (http:// only to a loopback address): it carries Entra ID tokens",
	"is missing: a client secret or certificate needs one",
	"or ClientCert is missing", "and ClientSecret are both set: keep one",
	"is not used with AuthType=azure", "is not used with AuthType=azure.msi",
	"is not used with AuthType=azure.app", "is not used with AuthType=aad",
}

func FuzzParseConnectionString(f *testing.F) {
	for _, seed := range []string{
		"Endpoint=https://x.service.signalr.net;AccessKey=" + azureTestKey + ";Version=1.0;",
		" endpoint = http://127.0.0.1:8080/ ; accesskey = k== ; port = 81 ;;",
		"Endpoint=https://x.net;AccessKey=k;ClientEndpoint=https://c.net;ServerEndpoint=https://s.net:1",
		"Endpoint=https://x.net AccessKey=secret",
		"Endpoint=https://user:pw@x.net;AccessKey=k",
		"Endpoint=https://x.net;AccessKey=a;accesskey=b",
		"Endpoint=http://[::1]:80/p%2Fq;AccessKey=k;Version=1.5",
		"AuthType=azure.app;Endpoint=https://x.net",
		"AuthType=azure.app;Endpoint=https://x.net;ClientId=c;TenantId=t;ClientSecret=s",
		";;;=;==;Endpoint",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseConnectionString(s)
		if err != nil {
			checkConnStrError(t, err)
			return
		}
		if !cs.Entra() && len(cs.AccessKey()) == 0 {
			t.Fatalf("parsed without a key or an AuthType: %v", cs)
		}
		// No printed form may depend on the secret. (Looking for the secret
		// in them found "leaks" of a secret that was only a piece of their
		// own text, such as `"htt` in `Endpoint:"http://…"`.)
		if printed, other := printedForms(cs), printedForms(withOtherSecret(cs)); printed != other {
			t.Fatalf("printed form depends on the secret: %q against %q with another", printed, other)
		}
		for _, u := range []string{cs.Endpoint(), cs.ServerEndpoint(), cs.ClientURL("Hub_1")} {
			if p, err := url.Parse(u); err != nil || p.Host == "" {
				t.Fatalf("endpoint %q does not parse back: %v", u, err)
			}
		}
		if q, _ := url.Parse(cs.ClientURL("Hub_1")); q.Query().Get("hub") != "hub_1" {
			t.Fatalf("ClientURL %q lost the hub", cs.ClientURL("Hub_1"))
		}
	})
}

// printedForms is every way cs prints, joined.
func printedForms(cs ConnectionString) string {
	return fmt.Sprintf("%v|%+v|%#v|%q|%s", cs, cs, cs, cs, cs)
}

// withOtherSecret is cs with its secret, the access key or the client
// secret, replaced by another of the same length.
func withOtherSecret(cs ConnectionString) ConnectionString {
	other := func(k *azureAccessKey) *azureAccessKey {
		if k == nil {
			return nil
		}
		s := bytes.Clone(k.secret)
		for i := range s {
			if s[i] == 'Z' {
				s[i] = 'Y'
			} else {
				s[i] = 'Z'
			}
		}
		return &azureAccessKey{secret: s}
	}
	cs.key = other(cs.key)
	if cs.entra != nil {
		e := *cs.entra
		e.secret = other(e.secret)
		cs.entra = &e
	}
	return cs
}

func checkConnStrError(t *testing.T, err error) {
	t.Helper()
	var ce *ConnectionStringError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConnectionStringError", err)
	}
	if !slices.Contains(csKnownKeys, ce.Key) || !slices.Contains(csErrorProblems, ce.Problem) {
		t.Fatalf("error %q uses text outside the fixed vocabulary", err)
	}
	if err.Error() != "azure: connection string: "+ce.Key+" "+ce.Problem {
		t.Fatalf("error %q carries more than key and problem", err)
	}
}
