package azure

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// jwtParse checks token with golang-jwt, an implementation independent of
// ours, the way the service would: HS256 only, aud, exp required, at now.
func jwtParse(t testing.TB, key []byte, token, aud string, now time.Time) (jwt.MapClaims, error) {
	t.Helper()
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(token, claims,
		func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithAudience(aud),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(func() time.Time { return now }))
	if err != nil {
		return nil, err
	}
	if parsed.Header["typ"] != "JWT" || parsed.Header["kid"] != nil || len(parsed.Header) != 2 {
		t.Errorf("header = %v, want exactly alg HS256 and typ JWT", parsed.Header)
	}
	return claims, nil
}

func mustJWTParse(t testing.TB, key []byte, token, aud string, now time.Time) jwt.MapClaims {
	t.Helper()
	claims, err := jwtParse(t, key, token, aud, now)
	if err != nil {
		t.Fatalf("golang-jwt rejects the token: %v", err)
	}
	return claims
}

func claimSeconds(t testing.TB, claims jwt.MapClaims, name string) int64 {
	t.Helper()
	v, ok := claims[name].(float64)
	if !ok {
		t.Fatalf("claim %s = %#v, want a number", name, claims[name])
	}
	return int64(v)
}

func TestMintTokenVerifiesWithGolangJWT(t *testing.T) {
	key := []byte(azureTestKey)
	now := time.Unix(1_700_000_000, 0)
	token, err := MintToken(key, TokenClaims{
		Audience: "https://x.service.signalr.net/api/v1/hubs/chat", ExpiresAt: now.Add(time.Hour),
		IssuedAt: now, NotBefore: now, UserID: "user-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	claims := mustJWTParse(t, key, token, "https://x.service.signalr.net/api/v1/hubs/chat", now.Add(time.Minute))
	if claims["aud"] != "https://x.service.signalr.net/api/v1/hubs/chat" || claims["nameid"] != "user-1" {
		t.Errorf("claims = %v", claims)
	}
	for name, want := range map[string]int64{"exp": 1_700_003_600, "iat": 1_700_000_000, "nbf": 1_700_000_000} {
		if got := claimSeconds(t, claims, name); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if _, err := jwtParse(t, []byte("another key"), token, claims["aud"].(string), now); !errors.Is(err, jwt.ErrTokenSignatureInvalid) {
		t.Errorf("golang-jwt with the wrong key: %v, want a signature error", err)
	}
	if _, err := jwtParse(t, key, token, claims["aud"].(string), now.Add(time.Hour)); !errors.Is(err, jwt.ErrTokenExpired) {
		t.Errorf("golang-jwt at exp: %v, want expired", err)
	}
}

func TestMintTokenOmitsZeroOptionalClaims(t *testing.T) {
	exp := time.Now().Add(time.Minute)
	token, err := MintToken([]byte("k"), TokenClaims{Audience: "https://a/b", ExpiresAt: exp})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["aud"] != "https://a/b" || int64(m["exp"].(float64)) != exp.Unix() {
		t.Errorf("payload = %s, want only aud and exp", payload)
	}
	for _, bad := range []TokenClaims{{ExpiresAt: exp}, {Audience: "https://a/b"}} {
		if _, err := MintToken([]byte("k"), bad); err == nil {
			t.Errorf("MintToken(%+v) accepted", bad)
		}
	}
	if _, err := MintToken(nil, TokenClaims{Audience: "https://a/b", ExpiresAt: exp}); err == nil {
		t.Error("MintToken accepted an empty key")
	}
}

func TestClientTokenAudienceAndClaims(t *testing.T) {
	cases := []struct{ cs, aud string }{
		{"Endpoint=https://x.service.signalr.net;AccessKey=" + azureTestKey + ";Version=1.0;", "https://x.service.signalr.net/client/?hub=chat"},
		// The Port key and ClientEndpoint change where clients go, not aud.
		{"Endpoint=https://x.service.signalr.net;AccessKey=" + azureTestKey + ";Port=8443;ClientEndpoint=https://c.example", "https://x.service.signalr.net/client/?hub=chat"},
		{"Endpoint=http://127.0.0.1:8080;AccessKey=" + azureTestKey, "http://127.0.0.1:8080/client/?hub=chat"},
	}
	for _, c := range cases {
		cs := mustParseCS(t, c.cs)
		before := time.Now().Truncate(time.Second)
		token, err := ClientToken(cs, "Chat", "alice", 0)
		if err != nil {
			t.Fatal(err)
		}
		claims := mustJWTParse(t, cs.AccessKey(), token, c.aud, time.Now())
		if claims["nameid"] != "alice" {
			t.Errorf("nameid = %v", claims["nameid"])
		}
		iat, exp := claimSeconds(t, claims, "iat"), claimSeconds(t, claims, "exp")
		if exp-iat != int64(DefaultClientTokenTTL/time.Second) || iat < before.Unix() {
			t.Errorf("iat %d exp %d: want a %s lifetime from now", iat, exp, DefaultClientTokenTTL)
		}
	}
	cs := mustParseCS(t, cases[0].cs)
	token, err := ClientToken(cs, "chat", "", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	claims := mustJWTParse(t, cs.AccessKey(), token, cases[0].aud, time.Now())
	if _, has := claims["nameid"]; has || claimSeconds(t, claims, "exp")-claimSeconds(t, claims, "iat") != 10 {
		t.Errorf("anonymous 10 s token claims = %v", claims)
	}
	for _, hub := range []string{"", "1chat", "chat-1", "chat/x", "chät"} {
		if _, err := ClientToken(cs, hub, "", 0); err == nil {
			t.Errorf("hub %q accepted", hub)
		}
	}
}

// hs256 is the HMAC-SHA256 of signingInput under key, for hand-built tokens
// that golang-jwt would not sign.
func hs256(key []byte, signingInput string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signingInput))
	return m.Sum(nil)
}

// handSigned is a token of header (JSON) and an encoded payload segment,
// signed with HS256 under key whatever header says.
func handSigned(key []byte, header, payloadSegment string) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + payloadSegment
	return in + "." + base64.RawURLEncoding.EncodeToString(hs256(key, in))
}

// jwtSign signs claims with golang-jwt.
func jwtSign(t testing.TB, method jwt.SigningMethod, key any, claims jwt.Claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyTokenAcceptsGolangJWTTokens(t *testing.T) {
	key := []byte(azureTestKey)
	now := time.Unix(1_700_000_000, 0)
	aud := "https://x.service.signalr.net/client/?hub=chat"
	tokens := map[string]string{
		"aud array": jwtSign(t, jwt.SigningMethodHS256, key, jwt.RegisteredClaims{
			Audience: jwt.ClaimStrings{"https://other", aud}, ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute)),
			NotBefore: jwt.NewNumericDate(now), IssuedAt: jwt.NewNumericDate(now),
		}),
		"aud string": jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{
			"aud": aud, "exp": now.Add(time.Minute).Unix(), "nameid": "bob",
		}),
		"fractional exp": jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{
			"aud": aud, "exp": float64(now.Unix()) + 0.5,
		}),
	}
	for name, token := range tokens {
		claims, err := VerifyToken(key, token, aud, now)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if claims.Audience != aud || !claims.ExpiresAt.After(now) {
			t.Errorf("%s: claims %+v", name, claims)
		}
	}
	claims, _ := VerifyToken(key, tokens["aud string"], aud, now)
	if claims.UserID != "bob" {
		t.Errorf("UserID = %q, want bob", claims.UserID)
	}
	claims, _ = VerifyToken(key, tokens["aud array"], aud, now)
	if !claims.NotBefore.Equal(now) || !claims.IssuedAt.Equal(now) {
		t.Errorf("nbf/iat = %v/%v", claims.NotBefore, claims.IssuedAt)
	}
}

func TestVerifyTokenRejects(t *testing.T) {
	key := []byte(azureTestKey)
	now := time.Unix(1_700_000_000, 0)
	aud := "https://x.service.signalr.net/api/v1/hubs/chat"
	valid := jwt.MapClaims{"aud": aud, "exp": now.Add(time.Minute).Unix()}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	none := jwtSign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, valid)
	good := jwtSign(t, jwt.SigningMethodHS256, key, valid)
	parts := strings.Split(good, ".")
	forged, _ := json.Marshal(map[string]any{"aud": "https://x.service.signalr.net/api/v1/hubs/admin", "exp": now.Add(time.Minute).Unix()})
	cases := []struct {
		name, token string
		want        error
	}{
		{"wrong key", jwtSign(t, jwt.SigningMethodHS256, []byte("another key"), valid), ErrTokenSignature},
		{"wrong audience", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"aud": aud + "/x", "exp": now.Add(time.Minute).Unix()}), ErrTokenAudience},
		{"expired", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"aud": aud, "exp": now.Unix()}), ErrTokenExpired},
		{"not yet valid", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"aud": aud, "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(time.Second).Unix()}), ErrTokenNotYetValid},
		{"alg none", none, ErrTokenAlgorithm},
		{"alg none, HMAC appended", none + base64.RawURLEncoding.EncodeToString(hs256(key, strings.TrimSuffix(none, "."))), ErrTokenAlgorithm},
		{"RS256", jwtSign(t, jwt.SigningMethodRS256, rsaKey, valid), ErrTokenAlgorithm},
		{"HS512 with the same key", jwtSign(t, jwt.SigningMethodHS512, key, valid), ErrTokenAlgorithm},
		{"alg lower case", handSigned(key, `{"alg":"hs256","typ":"JWT"}`, parts[1]), ErrTokenAlgorithm},
		{"crit header", handSigned(key, `{"alg":"HS256","crit":["exp"]}`, parts[1]), ErrTokenMalformed},
		{"payload swapped", parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2], ErrTokenSignature},
		{"signature dropped", parts[0] + "." + parts[1] + ".", ErrTokenSignature},
		{"no exp", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"aud": aud}), ErrTokenMalformed},
		{"no aud", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"exp": now.Add(time.Minute).Unix()}), ErrTokenMalformed},
		{"aud number", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"aud": 7, "exp": now.Add(time.Minute).Unix()}), ErrTokenMalformed},
		{"exp string", jwtSign(t, jwt.SigningMethodHS256, key, jwt.MapClaims{"aud": aud, "exp": "tomorrow"}), ErrTokenMalformed},
		{"two parts", parts[0] + "." + parts[1], ErrTokenMalformed},
		{"empty", "", ErrTokenMalformed},
		{"huge", strings.Repeat("a", azureMaxTokenLen+1), ErrTokenMalformed},
	}
	for _, c := range cases {
		_, err := VerifyToken(key, c.token, aud, now)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, azureTestKey) || (len(c.token) > 20 && strings.Contains(msg, c.token[len(c.token)-20:])) {
			t.Errorf("%s: error quotes the key or token: %s", c.name, msg)
		}
	}
	if _, err := VerifyToken(key, good, aud, now.Add(time.Minute-time.Second)); err != nil {
		t.Errorf("one second before exp: %v", err)
	}
	if _, err := VerifyToken(key, good, "", now); err == nil {
		t.Error("VerifyToken with no audience to check accepted")
	}
	if _, err := VerifyToken(nil, good, aud, now); err == nil {
		t.Error("VerifyToken with no key accepted")
	}
}

func TestMintedTokensRoundTripThroughVerifyToken(t *testing.T) {
	cs := mustParseCS(t, "Endpoint=https://x.service.signalr.net;AccessKey="+azureTestKey)
	token, err := ClientToken(cs, "chat", "carol", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := VerifyToken(cs.AccessKey(), token, "https://x.service.signalr.net/client/?hub=chat", time.Now())
	if err != nil || claims.UserID != "carol" {
		t.Fatalf("claims %+v, err %v", claims, err)
	}
	if _, err := VerifyToken(cs.AccessKey(), token, "https://x.service.signalr.net/client/?hub=chat", time.Now().Add(2*time.Minute)); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("after ttl: %v", err)
	}
}

// FuzzVerifyToken feeds VerifyToken hand-built tokens, signed with the right
// key or not: it must accept only tokens for the audience that are live at
// now, and refuse the rest with exactly one ErrToken* value and a message
// that quotes neither the key nor the signature.
func FuzzVerifyToken(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"alg":"HS256","typ":"JWT"}`, `{"aud":"https://a/b","exp":1700000060,"nameid":"u"}`},
		{`{"alg":"HS256"}`, `{"aud":["x","https://a/b"],"exp":1700000000.5,"nbf":1700000000}`},
		{`{"alg":"none"}`, `{"aud":"https://a/b","exp":1700000060}`},
		{`{"alg":"HS256","crit":["exp"]}`, `{"aud":"https://a/b","exp":1700000060}`},
		{`{"alg":"HS256"}`, `{"aud":"","exp":"1700000060","iat":-1e16}`},
		{`null`, `[]`},
	} {
		f.Add(seed[0], seed[1], true)
		f.Add(seed[0], seed[1], false)
	}
	key, aud, now := []byte(azureTestKey), "https://a/b", time.Unix(1_700_000_000, 0)
	refusals := []error{ErrTokenMalformed, ErrTokenAlgorithm, ErrTokenSignature, ErrTokenExpired, ErrTokenNotYetValid, ErrTokenAudience}
	f.Fuzz(func(t *testing.T, header, payload string, signed bool) {
		signingKey := []byte("not the key")
		if signed {
			signingKey = key
		}
		token := handSigned(signingKey, header, base64.RawURLEncoding.EncodeToString([]byte(payload)))
		sig := token[strings.LastIndexByte(token, '.')+1:]
		claims, err := VerifyToken(key, token, aud, now)
		if err == nil {
			if !signed || claims.Audience != aud || !now.Before(claims.ExpiresAt) || now.Before(claims.NotBefore) {
				t.Fatalf("accepted %s.%s (signed %v): %+v", header, payload, signed, claims)
			}
			return
		}
		matched := 0
		for _, r := range refusals {
			if errors.Is(err, r) {
				matched++
			}
		}
		if msg := err.Error(); matched != 1 || strings.Contains(msg, azureTestKey) || strings.Contains(msg, sig) {
			t.Fatalf("refusal %q wraps %d ErrToken* values or quotes the key or signature", msg, matched)
		}
	})
}
