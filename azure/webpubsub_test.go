package azure

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestWebPubSubClientURLHonoursPortAndScheme(t *testing.T) {
	for _, c := range []struct{ cs, want string }{
		{"Endpoint=https://x.webpubsub.azure.com;AccessKey=" + azureTestKey + ";Version=1.0;", "wss://x.webpubsub.azure.com/client/hubs/Chat"},
		{"Endpoint=https://x.webpubsub.azure.com;AccessKey=" + azureTestKey + ";Version=1.0;Port=8443;", "wss://x.webpubsub.azure.com:8443/client/hubs/Chat"},
		{"Endpoint=http://127.0.0.1;Port=8080;AccessKey=" + azureTestKey, "ws://127.0.0.1:8080/client/hubs/Chat"},
		{"Endpoint=http://localhost:9000/prefix/;AccessKey=" + azureTestKey, "ws://localhost:9000/prefix/client/hubs/Chat"},
	} {
		got, err := mustParseCS(t, c.cs).WebPubSubClientURL("Chat")
		if err != nil || got != c.want {
			t.Errorf("WebPubSubClientURL(%s) = %q, %v; want %q", c.cs, got, err, c.want)
		}
	}
}

func TestWebPubSubClientTokenClaims(t *testing.T) {
	cs := mustParseCS(t, "Endpoint=https://x.webpubsub.azure.com;Port=8443;AccessKey="+azureTestKey+";Version=1.0;")
	roles := []string{WebPubSubRoleJoinLeaveGroup, WebPubSubRoleSendToGroup}
	before := time.Now().Truncate(time.Second)
	token, err := WebPubSubClientToken(cs, "Chat", "user-7", roles, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The audience is the client URL on the http(s) scheme, port kept.
	aud := "https://x.webpubsub.azure.com:8443/client/hubs/Chat"
	raw, err := jwtParse(t, []byte(azureTestKey), token, aud, time.Now())
	if err != nil {
		t.Fatalf("golang-jwt refuses the token for %s: %v", aud, err)
	}
	if raw["sub"] != "user-7" || fmt.Sprint(raw["role"]) != "[webpubsub.joinLeaveGroup webpubsub.sendToGroup]" {
		t.Errorf("claims %v: want sub user-7 and both roles as an array", raw)
	}
	if _, has := raw["nbf"]; has {
		t.Errorf("claims %v carry nbf; the SDK sets none", raw)
	}
	if _, has := raw["nameid"]; has {
		t.Errorf("claims %v carry SignalR's nameid", raw)
	}
	exp, _ := raw.GetExpirationTime()
	if d := exp.Sub(before); d < 10*time.Minute || d > 10*time.Minute+2*time.Second {
		t.Errorf("exp is %s after minting, want 10m", d)
	}
	claims, err := VerifyToken([]byte(azureTestKey), token, aud, time.Now())
	if err != nil || claims.Subject != "user-7" || fmt.Sprint(claims.Roles) != fmt.Sprint(roles) {
		t.Errorf("VerifyToken = %+v, %v; want the subject and roles back", claims, err)
	}
}

func TestWebPubSubClientTokenWithoutUserOrRoles(t *testing.T) {
	cs := mustParseCS(t, "Endpoint=http://127.0.0.1:1234;AccessKey="+azureTestKey)
	token, err := WebPubSubClientToken(cs, "h", "", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwtParse(t, []byte(azureTestKey), token, "http://127.0.0.1:1234/client/hubs/h", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 3 {
		t.Errorf("claims %v, want exactly aud, exp and iat", raw)
	}
	exp, _ := raw.GetExpirationTime()
	if d := time.Until(exp.Time); d < DefaultClientTokenTTL-2*time.Second || d > DefaultClientTokenTTL {
		t.Errorf("exp in %s, want the default %s", d, DefaultClientTokenTTL)
	}
}

func TestWebPubSubClientTokenRefusesBadInput(t *testing.T) {
	cs := mustParseCS(t, "Endpoint=https://x.webpubsub.azure.com;AccessKey="+azureTestKey)
	for _, hub := range []string{"", "1hub", "a/b", "a b", strings.Repeat("a", 129)} {
		if _, err := WebPubSubClientToken(cs, hub, "u", nil, 0); err == nil {
			t.Errorf("hub %q accepted", hub)
		} else if strings.Contains(err.Error(), azureTestKey) {
			t.Errorf("error %q carries the key", err)
		}
		if _, err := cs.WebPubSubClientURL(hub); err == nil {
			t.Errorf("client URL for hub %q accepted", hub)
		}
	}
	if _, err := WebPubSubClientToken(ConnectionString{}, "hub", "u", nil, 0); err == nil {
		t.Error("an empty connection string minted a token")
	}
}

func TestVerifyTokenReadsASingleRoleString(t *testing.T) {
	// .NET's token handler writes one role as a plain string.
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"aud": "https://h/client/hubs/x", "exp": time.Now().Add(time.Minute).Unix(), "role": WebPubSubRoleSendToGroup, "sub": "u",
	}).SignedString([]byte(azureTestKey))
	if err != nil {
		t.Fatal(err)
	}
	claims, err := VerifyToken([]byte(azureTestKey), token, "https://h/client/hubs/x", time.Now())
	if err != nil || len(claims.Roles) != 1 || claims.Roles[0] != WebPubSubRoleSendToGroup || claims.Subject != "u" {
		t.Errorf("VerifyToken = %+v, %v", claims, err)
	}
}
