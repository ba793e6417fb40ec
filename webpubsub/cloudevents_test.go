package webpubsub

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// sampleEventLines is a custom event request as the CloudEvents reference
// page shows it, with both signatures for the test keys below.
const sampleEventLines = `WebHook-Request-Origin: xxx.webpubsub.azure.com
Content-Type: text/plain; charset=utf-8
ce-specversion: 1.0
ce-awpsversion: 1.0
ce-type: azure.webpubsub.user.echo
ce-source: /hubs/chat/client/0f9c97a2f0bf4706afe87a14e0797b11
ce-id: 12
ce-time: 2021-01-01T00:00:00Z
ce-signature: sha256=7767effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561,sha256=0000
ce-userId: user1
ce-connectionId: 0f9c97a2f0bf4706afe87a14e0797b11
ce-hub: chat
ce-eventName: echo
ce-subprotocol: json.webpubsub.azure.v1
ce-connectionState: eyJrZXkiOiJhIn0=`

// headerFromLines reads "Name: value" lines into a header.
func headerFromLines(in string) http.Header {
	h := http.Header{}
	for line := range strings.SplitSeq(in, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); ok && name != "" {
			h.Add(name, strings.TrimSpace(value))
		}
	}
	return h
}

var sampleEvent = CloudEvent{
	SpecVersion: "1.0", Type: "azure.webpubsub.user.echo",
	Source: "/hubs/chat/client/0f9c97a2f0bf4706afe87a14e0797b11", ID: "12", Time: "2021-01-01T00:00:00Z",
	AWPSVersion: "1.0", Hub: "chat", EventName: "echo", ConnectionID: "0f9c97a2f0bf4706afe87a14e0797b11",
	UserID: "user1", Subprotocol: ProtocolJSON, ConnectionState: "eyJrZXkiOiJhIn0=",
	Signature: "sha256=7767effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561,sha256=0000",
	Origin:    "xxx.webpubsub.azure.com", DataType: DataTypeText,
}

func TestParseCloudEvent(t *testing.T) {
	e, err := ParseCloudEvent(headerFromLines(sampleEventLines))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*e, sampleEvent) {
		t.Errorf("got  %+v\nwant %+v", *e, sampleEvent)
	}
	if !e.IsUserEvent() {
		t.Error("IsUserEvent = false for a custom event")
	}
}

func TestParseSystemEvent(t *testing.T) {
	h := headerFromLines(sampleEventLines)
	h.Set(HeaderType, "azure.webpubsub.sys.connected")
	h.Set(HeaderEventName, "connected")
	h.Del("Content-Type") // not read for system events
	e, err := ParseCloudEvent(h)
	if err != nil {
		t.Fatal(err)
	}
	if e.IsUserEvent() || e.DataType != DataTypeJSON || e.EventName != EventConnected {
		t.Errorf("got %+v", *e)
	}
}

// The service may send the signatures as separate header lines.
func TestParseCloudEventJoinsSignatureLines(t *testing.T) {
	h := headerFromLines(sampleEventLines)
	h.Del(HeaderSignature)
	h.Add(HeaderSignature, "sha256=aa")
	h.Add(HeaderSignature, "sha256=bb")
	e, err := ParseCloudEvent(h)
	if err != nil {
		t.Fatal(err)
	}
	if e.Signature != "sha256=aa,sha256=bb" {
		t.Errorf("Signature = %q", e.Signature)
	}
}

func TestParseCloudEventErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(http.Header)
		want   string
		notWPS bool
	}{
		{"no ce-awpsversion", func(h http.Header) { h.Del(HeaderAWPSVersion) }, "webpubsub: not a Web PubSub event request", true},
		{"no origin", func(h http.Header) { h.Del(HeaderRequestOrigin) }, "webpubsub: not a Web PubSub event request", true},
		{"no hub", func(h http.Header) { h.Del(HeaderHub) }, "webpubsub: invalid event request: no Ce-Hub header", false},
		{"no connection id", func(h http.Header) { h.Del(HeaderConnectionID) }, "webpubsub: invalid event request: no Ce-Connectionid header", false},
		{"no id", func(h http.Header) { h.Del(HeaderID) }, "webpubsub: invalid event request: no Ce-Id header", false},
		{"spec version", func(h http.Header) { h.Set(HeaderSpecVersion, "0.3") }, `webpubsub: invalid event request: Ce-Specversion "0.3" is not "1.0"`, false},
		{"foreign type", func(h http.Header) { h.Set(HeaderType, "com.example.thing") }, `webpubsub: invalid event request: Ce-Type "com.example.thing" is not a Web PubSub event type`, false},
		{"unknown system event", func(h http.Header) { h.Set(HeaderType, "azure.webpubsub.sys.reboot") }, `webpubsub: invalid event request: Ce-Type "azure.webpubsub.sys.reboot" is not a Web PubSub event type`, false},
		{"empty user event", func(h http.Header) { h.Set(HeaderType, "azure.webpubsub.user.") }, `webpubsub: invalid event request: Ce-Type "azure.webpubsub.user." is not a Web PubSub event type`, false},
		{"event name mismatch", func(h http.Header) { h.Set(HeaderEventName, "other") }, `webpubsub: invalid event request: Ce-Eventname "other" does not match Ce-Type "azure.webpubsub.user.echo"`, false},
		{"content type", func(h http.Header) { h.Set("Content-Type", "application/xml") }, `webpubsub: invalid event request: unsupported content type "application/xml"`, false},
		{"no content type", func(h http.Header) { h.Del("Content-Type") }, `webpubsub: invalid event request: no Content-Type header`, false},
		{"bad content type", func(h http.Header) { h.Set("Content-Type", "text/plain; charset") }, `webpubsub: invalid event request: content type "text/plain; charset": mime: invalid media parameter`, false},
		{"long value truncated", func(h http.Header) { h.Set(HeaderSpecVersion, strings.Repeat("9", 80)) },
			`webpubsub: invalid event request: Ce-Specversion "` + strings.Repeat("9", 40) + `"… is not "1.0"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := headerFromLines(sampleEventLines)
			tc.edit(h)
			_, err := ParseCloudEvent(h)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got %v\nwant %s", err, tc.want)
			}
			if errors.Is(err, ErrNotWebPubSub) != tc.notWPS || errors.Is(err, ErrInvalidEvent) == tc.notWPS {
				t.Errorf("error %v wraps the wrong sentinel", err)
			}
			if strings.Contains(err.Error(), "7767effc") || strings.Contains(err.Error(), "eyJrZXki") {
				t.Errorf("error %v repeats the signature or the connection state", err)
			}
		})
	}
}

func TestNewEventsWriteHeader(t *testing.T) {
	e := NewUserEvent("chat", "c1", "echo", DataTypeBinary)
	e.ID, e.Origin = "7", "svc.webpubsub.azure.com"
	e.Signature = Sign("c1", "k1", "k2")
	h := http.Header{}
	e.WriteHeader(h)
	want := http.Header{
		"Webhook-Request-Origin": {"svc.webpubsub.azure.com"}, "Ce-Specversion": {"1.0"}, "Ce-Awpsversion": {"1.0"},
		"Ce-Type": {"azure.webpubsub.user.echo"}, "Ce-Source": {"/hubs/chat/client/c1"}, "Ce-Id": {"7"},
		"Ce-Hub": {"chat"}, "Ce-Eventname": {"echo"}, "Ce-Connectionid": {"c1"},
		"Ce-Signature": {Sign("c1", "k1", "k2")}, "Content-Type": {"application/octet-stream"},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("got  %v\nwant %v", h, want)
	}
	s := newEvent("chat", "c1", SystemTypePrefix, EventDisconnected)
	h = http.Header{}
	s.WriteHeader(h)
	if h.Get(HeaderType) != "azure.webpubsub.sys.disconnected" || h.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("system event header %v", h)
	}
}

// An event built for the hub emulation crosses a real HTTP connection and
// is read back by the handler side with its signature intact.
func TestCloudEventOverHTTP(t *testing.T) {
	keys := []string{"primary-key", "secondary-key"}
	type result struct {
		event *CloudEvent
		body  string
		err   error
	}
	got := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := ParseCloudEvent(r.Header)
		body, _ := io.ReadAll(r.Body)
		got <- result{e, string(body), err}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	e := NewUserEvent("chat", "conn-1", "echo", DataTypeJSON)
	e.ID, e.Origin, e.UserID = "1", "127.0.0.1", "u1"
	e.Signature = Sign(e.ConnectionID, keys...)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/eventhandler", strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	e.WriteHeader(req.Header)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := <-got
	if r.err != nil || !reflect.DeepEqual(r.event, e) || r.body != `{"n":1}` {
		t.Fatalf("handler read %+v, body %q, err %v; sent %+v", r.event, r.body, r.err, e)
	}
	if !VerifySignature(r.event.Signature, r.event.ConnectionID, keys[1:]) {
		t.Error("the secondary key does not verify the signature that crossed HTTP")
	}
}
