package hub

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Roles that let a test client do everything.
var allRoles = []string{roleJoinLeaveGroup, roleSendToGroup}

// startWPSHub serves a hub with the access key (so with the Web PubSub
// data plane) on 127.0.0.1.
func startWPSHub(t *testing.T, opts Options) (*Hub, *Server, *prometheus.Registry) {
	t.Helper()
	opts.AccessKey = testAccessKey
	return startHub(t, opts)
}

// wpsToken mints a client token as the official server SDK does: aud the
// http(s) client URL, sub the user, role and webpubsub.group arrays.
func wpsToken(t *testing.T, key, aud, user string, roles, groups []string) string {
	t.Helper()
	claims := jwt.MapClaims{"aud": aud, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	if user != "" {
		claims["sub"] = user
	}
	if roles != nil {
		claims["role"] = roles
	}
	if groups != nil {
		claims["webpubsub.group"] = groups
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// restToken is the token the server SDK signs for one REST request: aud
// the full request URL.
func restToken(t *testing.T, key, requestURL string) string {
	t.Helper()
	claims := jwt.MapClaims{"aud": requestURL, "exp": time.Now().Add(time.Hour).Unix()}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// wpsClient is a bare Web PubSub client speaking a subprotocol by hand.
type wpsClient struct {
	t         *testing.T
	ws        *websocket.Conn
	connected webpubsub.Frame
}

func clientURL(srv *Server, hub string) string {
	return "ws" + strings.TrimPrefix(srv.Origin(), "http") + wpsHubPrefix + hub
}

// dialWPS opens a socket with protocol (none when empty) and the token;
// it returns the HTTP status when the hub refuses the upgrade.
func dialWPS(t *testing.T, rawURL, protocol, token string) (*wpsClient, *http.Response, error) {
	t.Helper()
	d := *websocket.DefaultDialer
	if protocol != "" {
		d.Subprotocols = []string{protocol}
	}
	if token != "" {
		rawURL += "?access_token=" + url.QueryEscape(token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ws, resp, err := d.DialContext(ctx, rawURL, nil)
	if err != nil {
		return nil, resp, err
	}
	c := &wpsClient{t: t, ws: ws}
	t.Cleanup(func() { _ = ws.Close() })
	return c, resp, nil
}

// connectWPS dials hub as user with roles and reads the connected message.
func connectWPS(t *testing.T, srv *Server, hub, protocol, user string, roles ...string) *wpsClient {
	t.Helper()
	tok := wpsToken(t, testAccessKey, srv.Origin()+wpsHubPrefix+hub, user, roles, nil)
	c, resp, err := dialWPS(t, clientURL(srv, hub), protocol, tok)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	if got := c.ws.Subprotocol(); got != protocol {
		t.Fatalf("subprotocol = %q, want %q", got, protocol)
	}
	if protocol != "" {
		c.connected = c.next()
		if c.connected.Kind != webpubsub.KindConnected {
			t.Fatalf("first frame = %v, want connected", c.connected.Kind)
		}
	}
	return c
}

func (c *wpsClient) send(frame string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *wpsClient) read(timeout time.Duration) (int, []byte, error) {
	_ = c.ws.SetReadDeadline(time.Now().Add(timeout))
	return c.ws.ReadMessage()
}

// next returns the next frame the hub sent.
func (c *wpsClient) next() webpubsub.Frame {
	c.t.Helper()
	_, data, err := c.read(testTimeout)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	f, err := webpubsub.Decode(data)
	if err != nil {
		c.t.Fatalf("decode %q: %v", data, err)
	}
	return f
}

// nextRaw returns the next frame as the hub wrote it.
func (c *wpsClient) nextRaw() string {
	c.t.Helper()
	_, data, err := c.read(testTimeout)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return string(data)
}

// expectNothing asserts the hub sends nothing for a while. A read that
// timed out leaves a gorilla connection unusable: it is a client's last.
func (c *wpsClient) expectNothing(wait time.Duration) {
	c.t.Helper()
	if _, data, err := c.read(wait); err == nil {
		c.t.Fatalf("got %q, want nothing", data)
	} else if !transport.IsTimeout(err) {
		c.t.Fatalf("want nothing, got %v", err)
	}
}

// expectDisconnected asserts a disconnected message saying want, then a
// close with code.
func (c *wpsClient) expectDisconnected(want string, code int) {
	c.t.Helper()
	f := c.next()
	if f.Kind != webpubsub.KindDisconnected || !strings.Contains(f.Message, want) {
		c.t.Fatalf("got %v %q, want disconnected containing %q", f.Kind, f.Message, want)
	}
	c.expectClose(code)
}

// expectClose asserts the socket closes with code.
func (c *wpsClient) expectClose(code int) {
	c.t.Helper()
	_, data, err := c.read(testTimeout)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		c.t.Fatalf("got %q %v, want a close", data, err)
	}
	if ce.Code != code {
		c.t.Fatalf("close code = %d (%q), want %d", ce.Code, ce.Text, code)
	}
}
