package wiretest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/signalr"
)

// MustConnectionString parses s.
func MustConnectionString(t testing.TB, s string) azure.ConnectionString {
	t.Helper()
	cs, err := azure.ParseConnectionString(s)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// ClientToken mints a client token of Azure SignalR Service for hub as
// user.
func ClientToken(t testing.TB, cs azure.ConnectionString, hub, user string) string {
	t.Helper()
	tok, err := azure.ClientToken(cs, hub, user, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Serverless are the options of a probe connecting to hub as user, as a
// client of a serverless Azure SignalR Service does.
func Serverless(t testing.TB, cs azure.ConnectionString, hub, user string, proto signalr.HubProtocol) signalrclient.Options {
	t.Helper()
	return signalrclient.Options{URL: cs.ClientURL(hub), AccessToken: ClientToken(t, cs, hub, user), Protocol: proto}
}

// Received is one invocation a probe connection received.
type Received struct {
	Target string
	Args   string
}

// DialProbe connects a probe connection that reports its OnConnected and
// RecordLatency invocations on the channel, after checking OnConnected.
func DialProbe(t testing.TB, opts signalrclient.Options) (*signalrclient.Conn, chan Received) {
	t.Helper()
	ch := make(chan Received, 64)
	opts.Handlers = map[string]signalrclient.Handler{}
	for _, target := range []string{"OnConnected", "RecordLatency"} {
		opts.Handlers[target] = func(args []json.RawMessage) {
			b, _ := json.Marshal(args)
			ch <- Received{Target: target, Args: string(b)}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	c, err := signalrclient.Dial(ctx, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	if got := ExpectReceived(t, ch); got.Target != "OnConnected" || got.Args != `["`+c.ConnectionID()+`"]` {
		t.Fatalf("first message %+v, want OnConnected(%s)", got, c.ConnectionID())
	}
	return c, ch
}

// ExpectReceived returns the next invocation.
func ExpectReceived(t testing.TB, ch chan Received) Received {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(Timeout):
		t.Fatal("timed out waiting for a message")
		return Received{}
	}
}

// ExpectPayloads asserts the next RecordLatency payloads of ch, in order.
func ExpectPayloads(t testing.TB, who string, ch chan Received, payloads ...string) {
	t.Helper()
	for _, p := range payloads {
		if got := ExpectReceived(t, ch); got.Target != "RecordLatency" || got.Args != "["+p+"]" {
			t.Fatalf("%s got %+v, want RecordLatency(%s)", who, got, p)
		}
	}
}

// GenerateToken calls :generateToken at path and returns the token it
// answered.
func GenerateToken(t testing.TB, srv Server, path, bearer string) string {
	t.Helper()
	r := Request(t, http.MethodPost, srv.Origin()+path, bearer, "")
	var body struct{ Token string }
	if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &body) != nil || body.Token == "" {
		t.Fatalf("POST %s: %d %s, want 200 {\"token\"}", path, r.Status, r.Body)
	}
	return body.Token
}

// ClaimsOf reads a token's claims, unverified.
func ClaimsOf(t testing.TB, token string) jwt.MapClaims {
	t.Helper()
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// EntraApp is the client (application) ID the tests' Entra tokens carry.
const EntraApp = "5a1c0e2d-7b3f-4e8a-9d6c-0f1e2d3c4b5a"
