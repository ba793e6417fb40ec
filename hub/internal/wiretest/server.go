package wiretest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/hubprobe/hubprobe/internal/localtest"
)

// TestServer serves one part of the hub on 127.0.0.1 in the tests of that
// part's package, as hub.Server serves the whole hub.
type TestServer struct {
	ts        *httptest.Server
	path      string
	accessKey string
	closeHub  func()
	closeOnce sync.Once
}

var _ Server = (*TestServer)(nil)

// Serve serves h until the test ends: path is its app path, accessKey its
// access key, and closeHub closes it before the server stops listening.
func Serve(t testing.TB, h http.Handler, path, accessKey string, closeHub func()) *TestServer {
	t.Helper()
	s := &TestServer{ts: localtest.Server(t, h), path: path, accessKey: accessKey, closeHub: closeHub}
	t.Cleanup(s.Close)
	return s
}

// URL is the app path's base URL.
func (s *TestServer) URL() string { return s.ts.URL + s.path }

// Origin is the server's scheme and address.
func (s *TestServer) Origin() string { return s.ts.URL }

// ConnectionString is the connection string of the emulated service.
func (s *TestServer) ConnectionString() string {
	return "Endpoint=" + s.ts.URL + ";AccessKey=" + s.accessKey + ";Version=1.0;"
}

// Close closes the hub, then stops listening, as hub.Server does.
func (s *TestServer) Close() {
	s.closeOnce.Do(func() {
		s.closeHub()
		s.ts.Close()
	})
}
