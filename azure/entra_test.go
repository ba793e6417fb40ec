package azure

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseConnectionStringAuthTypes(t *testing.T) {
	const ep = "Endpoint=https://x.service.signalr.net;"
	cases := []struct {
		in, authType, clientID, tenantID, cert string
		secret, app                            bool
	}{
		{in: ep + "AuthType=azure;Version=1.0;", authType: AuthTypeAzure},
		{in: ep + "authtype=AZURE.MSI;", authType: AuthTypeAzureMSI},
		{in: ep + "AuthType=azure.msi;ClientId=uami", authType: AuthTypeAzureMSI, clientID: "uami"},
		{in: ep + "AuthType=azure.app;ClientId=app;TenantId=tid;ClientSecret=" + azureTestKey, authType: AuthTypeAzureApp, clientID: "app", tenantID: "tid", secret: true, app: true},
		{in: ep + "AuthType=azure.app;clientId=app;tenantId=tid;clientCert=/etc/app.pem", authType: AuthTypeAzureApp, clientID: "app", tenantID: "tid", cert: "/etc/app.pem", app: true},
		{in: ep + "AuthType=aad;ClientId=uami", authType: AuthTypeAAD, clientID: "uami"},
		{in: ep + "AuthType=aad;ClientId=app;TenantId=tid;ClientSecret=" + azureTestKey, authType: AuthTypeAAD, clientID: "app", tenantID: "tid", secret: true, app: true},
	}
	for _, c := range cases {
		cs, err := ParseConnectionString(c.in)
		if err != nil {
			t.Errorf("%s: %v", cs, err)
			continue
		}
		a := cs.entra
		got := fmt.Sprint(cs.AuthType(), a.clientID, a.tenantID, a.certPath, a.secret != nil, a.app(), cs.AccessKey() == nil)
		want := fmt.Sprint(c.authType, c.clientID, c.tenantID, c.cert, c.secret, c.app, true)
		if got != want || !cs.Entra() {
			t.Errorf("%s: parsed %s, want %s", cs, got, want)
		}
	}
}

func TestEntraConnectionStringErrors(t *testing.T) {
	const ep = "Endpoint=https://x.service.signalr.net;"
	cases := []struct{ in, key, problem string }{
		{ep + "AuthType=azure;ClientId=c", csKeyClientID, "is not used with AuthType=azure"},
		{ep + "AuthType=azure.msi;TenantId=t", csKeyTenantID, "is not used with AuthType=azure.msi"},
		{ep + "AuthType=azure.app;TenantId=t;ClientSecret=" + azureTestKey, csKeyClientID, "is missing"},
		{ep + "AuthType=azure.app;ClientId=c;ClientSecret=" + azureTestKey, csKeyTenantID, "is missing"},
		{ep + "AuthType=azure.app;ClientId=c;TenantId=t", csKeyClientSecret, "or ClientCert is missing"},
		{ep + "AuthType=azure.app;ClientId=c;TenantId=t;ClientSecret=", csKeyClientSecret, "is empty"},
		{ep + "AuthType=aad;ClientId=c;ClientSecret=" + azureTestKey, csKeyTenantID, "is missing: a client secret or certificate needs one"},
		{ep + "AuthType=;ClientId=c", csKeyAuthType, "must be azure, azure.msi or azure.app"},
		{ep + "AccessKey=k;TenantId=t", csKeyTenantID, "goes with an AuthType, and the connection string has none"},
	}
	for _, c := range cases {
		_, err := ParseConnectionString(c.in)
		var ce *ConnectionStringError
		if !errors.As(err, &ce) || ce.Key != c.key || ce.Problem != c.problem {
			t.Errorf("%q: error %v, want %s %s", c.in, err, c.key, c.problem)
		}
		if err != nil && strings.Contains(err.Error(), azureTestKey) {
			t.Errorf("%q: error quotes the secret", c.in)
		}
	}
}

func TestEntraConnectionStringNeverPrintsTheSecret(t *testing.T) {
	cs, err := ParseConnectionString("Endpoint=https://x.webpubsub.azure.com;AuthType=azure.app;ClientId=app;TenantId=tid;ClientSecret=" + azureTestKey)
	if err != nil {
		t.Fatal(err)
	}
	want := "Endpoint=https://x.webpubsub.azure.com;AuthType=azure.app;ClientId=app;TenantId=tid;ClientSecret=REDACTED;"
	if cs.String() != want {
		t.Errorf("String() = %s, want %s", cs, want)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		for _, v := range []any{cs, &cs, struct{ C ConnectionString }{cs}, cs.entra, *cs.entra} {
			if out := fmt.Sprintf(verb, v); strings.Contains(out, azureTestKey) || strings.Contains(out, "s3cr3t") {
				t.Errorf("%s of %T prints the secret: %s", verb, v, out)
			}
		}
	}
}

func TestEntraStringsKeepTokensOffPlainHTTP(t *testing.T) {
	const auth = ";AuthType=azure.msi"
	for in, wantKey := range map[string]string{
		"Endpoint=http://x.service.signalr.net" + auth:                                      csKeyEndpoint,
		"Endpoint=https://x.service.signalr.net;ServerEndpoint=http://10.0.0.1:8080" + auth: csKeyServerEndpoint,
		"Endpoint=http://127.0.0.1:5050" + auth:                                             "",
		"Endpoint=http://[::1]:5050" + auth:                                                 "",
		"Endpoint=http://localhost:5050" + auth:                                             "",
		"Endpoint=http://x.service.signalr.net;AccessKey=" + azureTestKey:                   "",
	} {
		_, err := ParseConnectionString(in)
		var ce *ConnectionStringError
		switch {
		case wantKey == "" && err != nil:
			t.Errorf("%s: %v", in, err)
		case wantKey != "" && (!errors.As(err, &ce) || ce.Key != wantKey):
			t.Errorf("%s: error %v, want one naming %s", in, err, wantKey)
		}
	}
}
