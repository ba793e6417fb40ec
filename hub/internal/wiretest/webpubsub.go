package wiretest

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

	"github.com/hubprobe/hubprobe/webpubsub"
)

// ClientPath is the path of Web PubSub's client endpoint, before the hub
// name.
const ClientPath = "/client/hubs/"

// WPSToken mints a client token as the official server SDK does: aud the
// http(s) client URL, sub the user, role and webpubsub.group arrays.
func WPSToken(t testing.TB, key, aud, user string, roles, groups []string) string {
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

// RESTToken is the token the server SDK signs for one REST request: aud
// the full request URL.
func RESTToken(t testing.TB, key, requestURL string) string {
	t.Helper()
	claims := jwt.MapClaims{"aud": requestURL, "exp": time.Now().Add(time.Hour).Unix()}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// WPSClient is a bare Web PubSub client speaking a subprotocol by hand.
type WPSClient struct {
	T         testing.TB
	WS        *websocket.Conn
	Connected webpubsub.Frame // the connected frame, after ConnectWPS
}

// ClientURL is the client endpoint of hub.
func ClientURL(srv Server, hub string) string {
	return "ws" + strings.TrimPrefix(srv.Origin(), "http") + ClientPath + hub
}

// DialWPS opens a socket with protocol (none when empty) and the token;
// it returns the HTTP status when the hub refuses the upgrade.
func DialWPS(t testing.TB, rawURL, protocol, token string) (*WPSClient, *http.Response, error) {
	t.Helper()
	d := *websocket.DefaultDialer
	if protocol != "" {
		d.Subprotocols = []string{protocol}
	}
	if token != "" {
		rawURL += "?access_token=" + url.QueryEscape(token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	ws, resp, err := d.DialContext(ctx, rawURL, nil)
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { _ = ws.Close() })
	return &WPSClient{T: t, WS: ws}, resp, nil
}

// ConnectWPS dials hub as user with roles, with a token signed with
// AccessKey, and reads the connected message.
func ConnectWPS(t testing.TB, srv Server, hub, protocol, user string, roles ...string) *WPSClient {
	t.Helper()
	tok := WPSToken(t, AccessKey, srv.Origin()+ClientPath+hub, user, roles, nil)
	c, resp, err := DialWPS(t, ClientURL(srv, hub), protocol, tok)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	if got := c.WS.Subprotocol(); got != protocol {
		t.Fatalf("subprotocol = %q, want %q", got, protocol)
	}
	if protocol != "" {
		c.Connected = c.Next()
		if c.Connected.Kind != webpubsub.KindConnected {
			t.Fatalf("first frame = %v, want connected", c.Connected.Kind)
		}
	}
	return c
}

// Send writes one text frame.
func (c *WPSClient) Send(frame string) {
	c.T.Helper()
	if err := c.WS.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		c.T.Fatalf("write: %v", err)
	}
}

// Read reads one message within timeout.
func (c *WPSClient) Read(timeout time.Duration) (int, []byte, error) {
	_ = c.WS.SetReadDeadline(time.Now().Add(timeout))
	return c.WS.ReadMessage()
}

// Next returns the next frame the hub sent.
func (c *WPSClient) Next() webpubsub.Frame {
	c.T.Helper()
	_, data, err := c.Read(Timeout)
	if err != nil {
		c.T.Fatalf("read: %v", err)
	}
	f, err := webpubsub.Decode(data)
	if err != nil {
		c.T.Fatalf("decode %q: %v", data, err)
	}
	return f
}

// NextRaw returns the next frame as the hub wrote it.
func (c *WPSClient) NextRaw() string {
	c.T.Helper()
	_, data, err := c.Read(Timeout)
	if err != nil {
		c.T.Fatalf("read: %v", err)
	}
	return string(data)
}

// ExpectNothing asserts the hub sends nothing for a while. A read that
// timed out leaves a gorilla connection unusable: it is a client's last.
func (c *WPSClient) ExpectNothing(wait time.Duration) {
	c.T.Helper()
	if _, data, err := c.Read(wait); err == nil {
		c.T.Fatalf("got %q, want nothing", data)
	} else if !isTimeout(err) {
		c.T.Fatalf("want nothing, got %v", err)
	}
}

// ExpectDisconnected asserts a disconnected message saying want, then a
// close with code.
func (c *WPSClient) ExpectDisconnected(want string, code int) {
	c.T.Helper()
	f := c.Next()
	if f.Kind != webpubsub.KindDisconnected || !strings.Contains(f.Message, want) {
		c.T.Fatalf("got %v %q, want disconnected containing %q", f.Kind, f.Message, want)
	}
	c.ExpectClose(code)
}

// ExpectClose asserts the socket closes with code.
func (c *WPSClient) ExpectClose(code int) {
	c.T.Helper()
	_, data, err := c.Read(Timeout)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		c.T.Fatalf("got %q %v, want a close", data, err)
	}
	if ce.Code != code {
		c.T.Fatalf("close code = %d (%q), want %d", ce.Code, ce.Text, code)
	}
}

// ExpectAck asserts the next frame acks ackID with success, or with the
// error name when name is not empty.
func (c *WPSClient) ExpectAck(ackID uint64, name string) webpubsub.Frame {
	c.T.Helper()
	f := c.Next()
	switch {
	case f.Kind != webpubsub.KindAck || f.AckID != ackID:
		c.T.Fatalf("got %+v, want the ack of %d", f, ackID)
	case name == "" && !f.Success:
		c.T.Fatalf("ack %d failed: %+v", ackID, f.Error)
	case name != "" && (f.Success || f.Error.Name != name):
		c.T.Fatalf("ack %d = %+v, want error %s", ackID, f, name)
	}
	return f
}

// ExpectGroupMessage asserts the next frame is text data in group from user.
func (c *WPSClient) ExpectGroupMessage(group, fromUser, data string) {
	c.T.Helper()
	f := c.Next()
	if f.Kind != webpubsub.KindGroupMessage || f.Group != group || f.FromUserID != fromUser ||
		f.DataType != webpubsub.DataTypeText || string(f.Data) != data {
		c.T.Fatalf("got %+v (data %q), want %q from %q in %q", f, f.Data, data, fromUser, group)
	}
}

// ExpectServerMessage asserts the next frame is a server message as written.
func (c *WPSClient) ExpectServerMessage(dataType, data string) {
	c.T.Helper()
	want := `{"type":"message","from":"server","dataType":"` + dataType + `","data":` + data + `}`
	if got := c.NextRaw(); got != want {
		c.T.Fatalf("got  %s\nwant %s", got, want)
	}
}

// RESTAPI builds REST requests of one hub and signs each as the official
// server SDK does (aud = the whole URL, query included).
type RESTAPI struct {
	t   testing.TB
	API *webpubsub.REST
}

// NewRESTAPI calls the REST API of hub.
func NewRESTAPI(t testing.TB, srv Server, hub string) *RESTAPI {
	api, err := webpubsub.NewREST(srv.Origin(), hub, "")
	if err != nil {
		t.Fatal(err)
	}
	return &RESTAPI{t: t, API: api}
}

// Call sends req signed with AccessKey.
func (a *RESTAPI) Call(req webpubsub.Request, contentType, body string) HTTPResult {
	a.t.Helper()
	return CallSigned(a.t, req, AccessKey, req.URL, contentType, body)
}

// Expect asserts req is answered status.
func (a *RESTAPI) Expect(req webpubsub.Request, contentType, body string, status int) {
	a.t.Helper()
	if r := a.Call(req, contentType, body); r.Status != status {
		a.t.Fatalf("%s %s = %d %s, want %d", req.Method, req.URL, r.Status, r.Body, status)
	}
}

// CallSigned sends req with a token for aud signed with key.
func CallSigned(t testing.TB, req webpubsub.Request, key, aud, contentType, body string) HTTPResult {
	t.Helper()
	hc := NewHTTPConn(t, req.URL, "")
	hc.Header.Set("Authorization", "Bearer "+RESTToken(t, key, aud))
	if contentType != "" {
		hc.Header.Set("Content-Type", contentType)
	}
	return hc.Do(req.Method, strings.NewReader(body), "")
}
