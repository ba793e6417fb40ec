package webpubsubclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

const testHub = "Hub1"

// The roles of a client token that the test service checks, as the
// service names them.
const (
	roleJoinLeaveGroup = "webpubsub.joinLeaveGroup"
	roleSendToGroup    = "webpubsub.sendToGroup"
)

// testService plays the Web PubSub service's side of the client protocol
// on 127.0.0.1, with the codec the client uses: it upgrades with the
// subprotocol the client offers, takes only the access tokens it issued
// (token), sends connected and hands the socket to script. Scripts that
// return end the connection. Which tokens the real service takes is
// package azure's and the hub's to test; to the client a token is opaque.
type testService struct {
	t        testing.TB
	srv      *httptest.Server
	upgrader websocket.Upgrader
	script   func(s *svcConn)
	// beforeUpgrade, when set, may answer the request instead (return true).
	beforeUpgrade func(w http.ResponseWriter, r *http.Request) bool

	mu       sync.Mutex
	seen     []*http.Request
	nextID   int
	tokens   map[string]grant // issued by token
	stopped  bool             // set when the test ends; no socket is served after
	finished sync.WaitGroup   // the scripts running, added to under mu
}

// grant is what a token lets its client be and do.
type grant struct {
	user  string
	roles []string
}

// svcConn is one accepted client connection.
type svcConn struct {
	t        testing.TB
	ws       *websocket.Conn
	id, user string
	roles    []string
	reliable bool
	dec      webpubsub.Decoder
	f        webpubsub.Frame
	rbuf     []byte

	wmu  sync.Mutex // deliveries from other connections write too
	wbuf []byte
	seq  uint64 // last sequenceId sent, under wmu
}

// newTestService starts the service; setup, when given, adjusts it before
// it serves anything.
func newTestService(t testing.TB, script func(s *svcConn), setup ...func(s *testService)) *testService {
	t.Helper()
	s := &testService{t: t, script: script, tokens: map[string]grant{}}
	s.upgrader = websocket.Upgrader{Subprotocols: []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable}}
	for _, f := range setup {
		f(s)
	}
	s.srv = localtest.Server(t, http.HandlerFunc(s.serve))
	t.Cleanup(s.stop)
	return s
}

// stop waits for every script to return.
func (s *testService) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.finished.Wait()
}

// started counts a script in, unless the test is over.
func (s *testService) started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.finished.Add(1)
	return true
}

func (s *testService) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r)
	s.nextID++
	id := "conn-" + strconv.Itoa(s.nextID)
	g, issued := s.tokens[r.URL.Query().Get("access_token")]
	s.mu.Unlock()
	if s.beforeUpgrade != nil && s.beforeUpgrade(w, r) {
		return
	}
	if !issued || r.URL.Path != "/client/hubs/"+testHub {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if !s.started() {
		http.Error(w, "test over", http.StatusServiceUnavailable)
		return
	}
	defer s.finished.Done()
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	c := &svcConn{t: s.t, ws: ws, id: id, user: g.user, roles: g.roles, reliable: webpubsub.IsReliable(ws.Subprotocol())}
	s.script(c)
}

func (s *testService) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

// options returns Dial options for user with both group roles.
func (s *testService) options(user, protocol string) Options {
	url := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/client/hubs/" + testHub
	return Options{URL: url, AccessToken: s.token(user, roleJoinLeaveGroup, roleSendToGroup), Protocol: protocol}
}

// token issues a client token for user with roles: a secret the tests
// look for in errors.
func (s *testService) token(user string, roles ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	token := "token-SECRET-" + strconv.Itoa(len(s.tokens)) + "-" + user
	s.tokens[token] = grant{user: user, roles: roles}
	return token
}

func (s *testService) dial(t testing.TB, o Options) *Conn {
	t.Helper()
	c, err := Dial(localtest.Ctx(t, 5*time.Second), o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// send writes f; deliveries of other connections' goroutines take turns.
func (c *svcConn) send(f *webpubsub.Frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.reliable && (f.Kind == webpubsub.KindGroupMessage || f.Kind == webpubsub.KindServerMessage) && f.SequenceID == 0 {
		c.seq++
		f.SequenceID = c.seq
	}
	b, err := webpubsub.AppendFrame(c.wbuf[:0], f)
	if err != nil {
		c.t.Errorf("test service cannot encode %v: %v", f.Kind, err)
		return err
	}
	c.wbuf = b
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *svcConn) sendText(s string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, []byte(s))
}

func (c *svcConn) connected() error {
	return c.send(&webpubsub.Frame{Kind: webpubsub.KindConnected, ConnectionID: c.id, UserID: c.user, ReconnectionToken: "reconnect-secret"})
}

// read returns the client's next frame, valid until the next read. It
// reuses its buffers, so the benchmarks measure the client's allocations.
func (c *svcConn) read() (*webpubsub.Frame, error) {
	_, r, err := c.ws.NextReader()
	if err != nil {
		return nil, err
	}
	if c.rbuf, err = readAll(c.rbuf[:0], r, nil); err != nil {
		return nil, err
	}
	if err := c.dec.Decode(c.rbuf, &c.f); err != nil {
		c.t.Errorf("client sent an invalid frame %q: %v", c.rbuf, err)
		return nil, err
	}
	return &c.f, nil
}

// closeCode reads until the client's close frame and returns its code.
func (c *svcConn) closeCode() int {
	_ = c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.ws.ReadMessage()
		if ce, ok := err.(*websocket.CloseError); ok {
			return ce.Code
		}
		if err != nil {
			return -1
		}
	}
}

func (c *svcConn) hasRole(role string) bool {
	for _, r := range c.roles {
		if r == role {
			return true
		}
	}
	return false
}

// noSecret fails t when err's text carries the key or a token.
func noSecret(t *testing.T, err error, tokens ...string) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, s := range append(tokens, "reconnect-secret") {
		if s != "" && strings.Contains(msg, s) {
			t.Errorf("error %q carries a secret", msg)
		}
	}
}
