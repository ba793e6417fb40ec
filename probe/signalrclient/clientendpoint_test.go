package signalrclient

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// serviceToken stands for the client token a serverless Azure SignalR
// Service's negotiate function hands out; which tokens the service takes
// is package azure's and the hub's to test, not the client's.
const serviceToken = "c2VydmljZS10b2tlbit2YWx1ZS85ODc2NTQzMjEw="

// clientEndpoint plays Azure SignalR Service's client endpoints, negotiate
// and the WebSocket, both taking serviceToken as the bearer and nothing
// else.
type clientEndpoint struct {
	t        *testing.T
	endpoint string // http://127.0.0.1:port

	mu       sync.Mutex
	requests []string // "METHOD path?query"
	bearers  int      // requests that presented serviceToken
}

func newClientEndpoint(t *testing.T) *clientEndpoint {
	e := &clientEndpoint{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /client/negotiate", e.negotiate)
	mux.HandleFunc("GET /client/", e.connect)
	e.endpoint = newLocalServer(t, mux).URL
	return e
}

// authorize records the request and refuses it without serviceToken.
func (e *clientEndpoint) authorize(w http.ResponseWriter, r *http.Request) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, r.Method+" "+r.URL.RequestURI())
	if r.Header.Get("Authorization") != "Bearer "+serviceToken {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return false
	}
	e.bearers++
	return true
}

func (e *clientEndpoint) negotiate(w http.ResponseWriter, r *http.Request) {
	if !e.authorize(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"negotiateVersion":1,"connectionId":"conn-1","connectionToken":"ctok-1",`+
		`"availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`)
}

func (e *clientEndpoint) connect(w http.ResponseWriter, r *http.Request) {
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

func (e *clientEndpoint) seen() ([]string, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.requests...), e.bearers
}

// A client of a serverless service dials the client URL with the token a
// negotiate function gave it: Dial posts the service's negotiate with the
// hub's query and the token as the bearer, and presents it again on the
// WebSocket.
func TestDialThroughTheServiceClientEndpoint(t *testing.T) {
	svc := newClientEndpoint(t)
	obs := &recordingObserver{}
	opts := Options{URL: svc.endpoint + "/client/?hub=chat", AccessToken: serviceToken}
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
	requests, bearers := svc.seen()
	want := []string{"POST /client/negotiate?hub=chat&negotiateVersion=1", "GET /client/?hub=chat&id=ctok-1"}
	if strings.Join(requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(requests, "\n"), strings.Join(want, "\n"))
	}
	if bearers != 2 {
		t.Errorf("%d requests presented the token, want negotiate and the WebSocket", bearers)
	}
	if got := obs.responses(); len(got) != 1 || got[0] != "negotiate 200" {
		t.Errorf("observer saw %v", got)
	}
}

// A token the service refuses fails Dial in the negotiate phase with the
// status, and the error does not carry the token.
func TestDialWithARefusedTokenFailsInNegotiate(t *testing.T) {
	svc := newClientEndpoint(t)
	const wrongToken = "d3JvbmctdG9rZW4rdmFsdWUvMDEyMzQ1Njc4OQ=="
	_, err := Dial(testCtx(t, 5*time.Second), Options{URL: svc.endpoint + "/client/?hub=chat", AccessToken: wrongToken})
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseNegotiate || ce.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Dial: %v, want a 401 negotiate clientconn.ConnectError", err)
	}
	if strings.Contains(err.Error(), wrongToken) {
		t.Errorf("error holds the token: %s", err)
	}
	if requests, _ := svc.seen(); len(requests) != 1 {
		t.Errorf("requests after the refusal: %v, want negotiate alone", requests)
	}
}
