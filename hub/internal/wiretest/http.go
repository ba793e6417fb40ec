package wiretest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// HTTPConn drives the Server-Sent Events and Long Polling transports (and
// any HTTP endpoint) by hand, so tests see exact status codes, headers and
// bytes.
type HTTPConn struct {
	t      testing.TB
	base   string // the transport endpoint, without query
	token  string
	Header http.Header // added to every request (Authorization)
}

// HTTPResult is one answer.
type HTTPResult struct {
	Status int
	Header http.Header
	Body   string
}

// NewHTTPConn sends to base, with the connection token if any.
func NewHTTPConn(t testing.TB, base, token string) *HTTPConn {
	return &HTTPConn{t: t, base: base, token: token, Header: http.Header{}}
}

func (hc *HTTPConn) url() string {
	if hc.token == "" {
		return hc.base
	}
	sep := "?"
	if strings.Contains(hc.base, "?") {
		sep = "&"
	}
	return hc.base + sep + "id=" + hc.token
}

// Do sends one request and reads the whole answer.
func (hc *HTTPConn) Do(method string, body io.Reader, accept string) HTTPResult {
	hc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, hc.url(), body)
	if err != nil {
		hc.t.Fatal(err)
	}
	for k, v := range hc.Header {
		req.Header[k] = v
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		hc.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		hc.t.Fatalf("%s body: %v", method, err)
	}
	return HTTPResult{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// Post sends body.
func (hc *HTTPConn) Post(body string) HTTPResult {
	hc.t.Helper()
	return hc.Do(http.MethodPost, strings.NewReader(body), "")
}

// Poll polls once.
func (hc *HTTPConn) Poll() HTTPResult {
	hc.t.Helper()
	return hc.Do(http.MethodGet, nil, "")
}

// Delete ends a Long Polling connection.
func (hc *HTTPConn) Delete() HTTPResult {
	hc.t.Helper()
	return hc.Do(http.MethodDelete, nil, "")
}

// Expect asserts status and exact body.
func (r HTTPResult) Expect(t testing.TB, what string, status int, body string) {
	t.Helper()
	if r.Status != status || r.Body != body {
		t.Fatalf("%s: got %d %q, want %d %q", what, r.Status, r.Body, status, body)
	}
}

// PollFor polls until a poll returns data, skipping empty timeouts.
func (hc *HTTPConn) PollFor() HTTPResult {
	hc.t.Helper()
	for {
		r := hc.Poll()
		if r.Status != http.StatusOK || r.Body != "" {
			return r
		}
	}
}

// Request sends method to url with a bearer token (none when empty).
func Request(t testing.TB, method, url, token, body string) HTTPResult {
	t.Helper()
	hc := NewHTTPConn(t, url, "")
	if token != "" {
		hc.Header.Set("Authorization", "Bearer "+token)
	}
	return hc.Do(method, strings.NewReader(body), "")
}

// SSEStream is an open event stream.
type SSEStream struct {
	t    testing.TB
	Resp *http.Response
	Raw  *bufio.Reader // the stream's bytes as they arrive
	stop context.CancelFunc
}

// OpenSSE opens the event stream, closed when the test ends.
func (hc *HTTPConn) OpenSSE() *SSEStream {
	hc.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hc.url(), nil)
	for k, v := range hc.Header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		hc.t.Fatalf("event stream: %v", err)
	}
	s := &SSEStream{t: hc.t, Resp: resp, Raw: bufio.NewReader(resp.Body), stop: cancel}
	hc.t.Cleanup(s.close)
	return s
}

func (s *SSEStream) close() {
	s.stop()
	_ = s.Resp.Body.Close()
}

// RawEvent reads one event's exact bytes, up to and including the blank
// line that ends it.
func (s *SSEStream) RawEvent() (string, error) {
	var ev bytes.Buffer
	for {
		line, err := s.Raw.ReadString('\n')
		ev.WriteString(line)
		if err != nil {
			return ev.String(), err
		}
		if line == "\r\n" {
			return ev.String(), nil
		}
	}
}

// Event returns the next event's data, lines joined with LF as a browser
// does; keep-alive pings are skipped.
func (s *SSEStream) Event() string {
	s.t.Helper()
	for {
		raw, err := s.RawEvent()
		if err != nil {
			s.t.Fatalf("event stream: %v (read %q)", err, raw)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				lines = append(lines, d)
			}
		}
		if data := strings.Join(lines, "\n"); data != `{"type":6}`+"\x1e" {
			return data
		}
	}
}
