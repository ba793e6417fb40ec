// Package localtest gives tests servers that listen on 127.0.0.1 only,
// contexts that bound every test in time, and the checks that a
// connection ended and left no goroutine behind.
package localtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
)

// Server serves h on 127.0.0.1 only, and closes it when the test ends.
func Server(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	return serve(t, h, (*httptest.Server).Start)
}

// TLSServer serves h over TLS on 127.0.0.1 only, with httptest's
// self-signed certificate (its own CA; srv.Client trusts it), and closes
// it when the test ends.
func TLSServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	return serve(t, h, (*httptest.Server).StartTLS)
}

func serve(t testing.TB, h http.Handler, start func(*httptest.Server)) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	start(srv)
	t.Cleanup(srv.Close)
	return srv
}

// Ctx is a context that ends after d or when the test ends.
func Ctx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// CheckNoLeak fails t if goroutines started after baseline (a
// runtime.NumGoroutine taken before the test's connections) are still
// running shortly after those connections ended.
func CheckNoLeak(t testing.TB, baseline int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	n := runtime.NumGoroutine()
	for n > baseline && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > baseline {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines running, baseline %d:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// WaitDone fails t unless c, a connection of any client, has ended
// within d.
func WaitDone(t testing.TB, c interface{ Done() <-chan struct{} }, d time.Duration) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(d):
		t.Fatalf("connection still open after %s", d)
	}
}
