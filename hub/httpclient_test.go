package hub

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// httpConn drives the Server-Sent Events and Long Polling transports by
// hand, so tests see exact status codes, headers and bytes.
type httpConn struct {
	t      *testing.T
	base   string // the transport endpoint, without query
	token  string
	header http.Header // added to every request (Authorization)
}

type httpResult struct {
	status int
	header http.Header
	body   string
}

func newHTTPConn(t *testing.T, base, token string) *httpConn {
	return &httpConn{t: t, base: base, token: token, header: http.Header{}}
}

func (hc *httpConn) url() string {
	if hc.token == "" {
		return hc.base
	}
	sep := "?"
	if strings.Contains(hc.base, "?") {
		sep = "&"
	}
	return hc.base + sep + "id=" + hc.token
}

func (hc *httpConn) do(method string, body io.Reader, accept string) httpResult {
	hc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, hc.url(), body)
	if err != nil {
		hc.t.Fatal(err)
	}
	for k, v := range hc.header {
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
	return httpResult{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (hc *httpConn) post(body string) httpResult {
	hc.t.Helper()
	return hc.do(http.MethodPost, strings.NewReader(body), "")
}

func (hc *httpConn) poll() httpResult {
	hc.t.Helper()
	return hc.do(http.MethodGet, nil, "")
}

func (hc *httpConn) delete() httpResult {
	hc.t.Helper()
	return hc.do(http.MethodDelete, nil, "")
}

// expect asserts status and exact body.
func (r httpResult) expect(t *testing.T, what string, status int, body string) {
	t.Helper()
	if r.status != status || r.body != body {
		t.Fatalf("%s: got %d %q, want %d %q", what, r.status, r.body, status, body)
	}
}

// pollFor polls until a poll returns data, skipping empty timeouts.
func (hc *httpConn) pollFor() httpResult {
	hc.t.Helper()
	for {
		r := hc.poll()
		if r.status != http.StatusOK || r.body != "" {
			return r
		}
	}
}

// sseStream is an open event stream.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	br   *bufio.Reader
	stop context.CancelFunc
}

func (hc *httpConn) openSSE() *sseStream {
	hc.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hc.url(), nil)
	for k, v := range hc.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		hc.t.Fatalf("event stream: %v", err)
	}
	s := &sseStream{t: hc.t, resp: resp, br: bufio.NewReader(resp.Body), stop: cancel}
	hc.t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.stop()
	s.resp.Body.Close()
}

// rawEvent reads one event's exact bytes, up to and including the blank
// line that ends it.
func (s *sseStream) rawEvent() (string, error) {
	var ev bytes.Buffer
	for {
		line, err := s.br.ReadString('\n')
		ev.WriteString(line)
		if err != nil {
			return ev.String(), err
		}
		if line == "\r\n" {
			return ev.String(), nil
		}
	}
}

// event returns the next event's data, lines joined with LF as a browser
// does; keep-alive pings are skipped.
func (s *sseStream) event() string {
	s.t.Helper()
	for {
		raw, err := s.rawEvent()
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
