package eventhandler

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// Test hub, keys and connection. The secondary key is the service's other
// access key, which it signs with too.
const (
	testHub       = "probe"
	testKey       = "7aab239577fd4f24bc919802fb629f5f"
	testSecondary = "c0ffee0123456789c0ffee0123456789"
	testConn      = "0f9c97a2f0bf4706afe87a14e0797b11"
	testOrigin    = "probe.webpubsub.azure.com"
)

// request is one request a test sends to both handlers.
type request struct {
	method string
	path   string
	header http.Header
	body   []byte
}

// userEvent is the request the service sends for a client event, signed
// with keys.
func userEvent(event string, dataType webpubsub.DataType, body []byte, keys ...string) request {
	ev := webpubsub.NewUserEvent(testHub, testConn, event, dataType)
	return signed(ev, body, keys)
}

// systemEvent is userEvent for connect, connected and disconnected: the
// same attributes but the type, with a JSON body.
func systemEvent(event string, body []byte, keys ...string) request {
	ev := webpubsub.NewUserEvent(testHub, testConn, event, webpubsub.DataTypeJSON)
	ev.Type = webpubsub.SystemTypePrefix + event
	return signed(ev, body, keys)
}

func signed(ev *webpubsub.CloudEvent, body []byte, keys []string) request {
	ev.ID, ev.Time, ev.Origin = "1", time.Now().UTC().Format(time.RFC3339), testOrigin
	ev.Signature = webpubsub.Sign(ev.ConnectionID, keys...)
	h := http.Header{}
	ev.WriteHeader(h)
	return request{method: http.MethodPost, path: hubPath(testHub), header: h, body: body}
}

// handshakeRequest is the abuse-protection OPTIONS request.
func handshakeRequest() request {
	return request{method: http.MethodOptions, path: hubPath(testHub), header: webpubsub.ValidationHeader(testOrigin)}
}

// hubPath is the path the service posts to for hub.
func hubPath(hub string) string { return Prefix + hub + eventsSegment }

// answer is what a test compares of a response.
type answer struct {
	code          int
	allowedOrigin string
	contentType   string
	body          []byte
}

func send(t *testing.T, base string, rq request) answer {
	t.Helper()
	req, err := http.NewRequest(rq.method, base+rq.path, bytes.NewReader(rq.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range rq.header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{
		code:          res.StatusCode,
		allowedOrigin: res.Header.Get(webpubsub.HeaderAllowedOrigin),
		contentType:   res.Header.Get("Content-Type"),
		body:          body,
	}
}
