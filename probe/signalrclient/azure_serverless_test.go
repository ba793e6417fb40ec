package signalrclient

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// azureServiceEmulator plays Azure SignalR Service's client endpoints:
// negotiate and the WebSocket, both checking the bearer token the way the
// service does (aud = {endpoint}/client/?hub=<hub>).
type azureServiceEmulator struct {
	t        *testing.T
	key      []byte
	endpoint string // http://127.0.0.1:port

	mu       sync.Mutex
	requests []string // "METHOD path?query"
	userIDs  []string // nameid of each accepted token
}

func newAzureServiceEmulator(t *testing.T, key string) *azureServiceEmulator {
	e := &azureServiceEmulator{t: t, key: []byte(key)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /client/negotiate", e.negotiate)
	mux.HandleFunc("GET /client/", e.connect)
	srv := newLocalServer(t, mux)
	e.endpoint = srv.URL
	return e
}

func (e *azureServiceEmulator) record(r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, r.Method+" "+r.URL.RequestURI())
}

// authorize checks the bearer token against the hub named in the query.
func (e *azureServiceEmulator) authorize(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	aud := e.endpoint + "/client/?hub=" + r.URL.Query().Get("hub")
	claims, err := azure.VerifyToken(e.key, token, aud, time.Now())
	if !ok || err != nil {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return false
	}
	// The independent check: golang-jwt must agree.
	if _, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return e.key, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithAudience(aud), jwt.WithExpirationRequired()); err != nil {
		e.t.Errorf("golang-jwt rejects a token VerifyToken accepted: %v", err)
	}
	e.mu.Lock()
	e.userIDs = append(e.userIDs, claims.UserID)
	e.mu.Unlock()
	return true
}

func (e *azureServiceEmulator) negotiate(w http.ResponseWriter, r *http.Request) {
	e.record(r)
	if !e.authorize(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"negotiateVersion":1,"connectionId":"conn-1","connectionToken":"ctok-1",`+
		`"availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
}

func (e *azureServiceEmulator) connect(w http.ResponseWriter, r *http.Request) {
	e.record(r)
	if r.URL.Query().Get("id") != "ctok-1" {
		http.Error(w, "unknown connection", http.StatusNotFound)
		return
	}
	if !e.authorize(w, r) {
		return
	}
	ws, err := testUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	if acceptHandshake(e.t, ws) {
		drainUntilClosed(ws)
	}
}

func (e *azureServiceEmulator) seen() ([]string, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.requests...), append([]string(nil), e.userIDs...)
}

func TestServerlessOptionsDialThroughServiceNegotiate(t *testing.T) {
	svc := newAzureServiceEmulator(t, serverlessTestKey)
	cs := parseTestCS(t, "Endpoint="+svc.endpoint+";AccessKey="+serverlessTestKey+";Version=1.0;")
	opts, err := ServerlessOptions(cs, "Chat", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if opts.URL != svc.endpoint+"/client/?hub=chat" {
		t.Errorf("URL = %s", opts.URL)
	}
	obs := &recordingObserver{}
	opts.Observer = obs
	c, err := Dial(testCtx(t, 5*time.Second), opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if c.ConnectionID() != "conn-1" {
		t.Errorf("ConnectionID = %q", c.ConnectionID())
	}
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil {
		t.Errorf("Close: %v", err)
	}
	requests, users := svc.seen()
	want := []string{"POST /client/negotiate?hub=chat&negotiateVersion=1", "GET /client/?hub=chat&id=ctok-1"}
	if strings.Join(requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(requests, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(users, ",") != "alice,alice" {
		t.Errorf("token user IDs = %v, want alice on negotiate and on the WebSocket", users)
	}
	if got := obs.responses(); len(got) != 1 || got[0] != "negotiate 200" {
		t.Errorf("observer saw %v", got)
	}
}

func TestServerlessDialWithWrongKeyIsRefused(t *testing.T) {
	svc := newAzureServiceEmulator(t, serverlessTestKey)
	const wrongKey = "wrongKEY0123456789abcdefghij="
	cs := parseTestCS(t, "Endpoint="+svc.endpoint+";AccessKey="+wrongKey+";Version=1.0;")
	opts, err := ServerlessOptions(cs, "chat", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dial(testCtx(t, 5*time.Second), opts)
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Dial: %v, want a 401 negotiate clientconn.ConnectError", err)
	}
	if msg := err.Error(); strings.Contains(msg, wrongKey) || strings.Contains(msg, opts.AccessToken) {
		t.Errorf("error holds a secret: %s", msg)
	}
	if _, err := ServerlessOptions(cs, "no-dashes", ""); err == nil {
		t.Error("invalid hub name accepted")
	}
}

// serverlessTestKey looks like a real access key (base64, with '+', '/', '=').
const serverlessTestKey = "c2VydmVybGVzcytrZXkvdmFsdWU5ODc2NTQzMjEw="

func parseTestCS(t testing.TB, s string) azure.ConnectionString {
	t.Helper()
	cs, err := azure.ParseConnectionString(s)
	if err != nil {
		t.Fatalf("ParseConnectionString: %v", err)
	}
	return cs
}
