package signalrclient_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// negotiateGate holds every negotiate request until a round's worth are in
// flight together, so each round needs that many HTTP connections at once,
// and records which client socket (remote address) each came on.
type negotiateGate struct {
	next    http.Handler
	arrived chan struct{}
	mu      sync.Mutex
	release chan struct{}
	sockets map[string]bool
}

func (g *negotiateGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/negotiate") {
		g.mu.Lock()
		g.sockets[r.RemoteAddr] = true
		release := g.release
		g.mu.Unlock()
		g.arrived <- struct{}{}
		<-release
	}
	g.next.ServeHTTP(w, r)
}

// round dials n connections at once with the default options, lets their
// negotiate requests go once all n are in flight, and closes them.
func (g *negotiateGate) round(t *testing.T, ctx context.Context, url string, n int) {
	t.Helper()
	g.mu.Lock()
	g.release = make(chan struct{})
	g.mu.Unlock()
	conns := make(chan *signalrclient.Conn, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			c, err := signalrclient.Dial(ctx, signalrclient.Options{URL: url})
			if err != nil {
				errs <- err
				return
			}
			conns <- c
		}()
	}
	for range n {
		select {
		case <-g.arrived:
		case <-ctx.Done():
			t.Fatal("the negotiate requests did not arrive together")
		}
	}
	close(g.release)
	for range n {
		select {
		case c := <-conns:
			if err := c.Close(ctx); err != nil {
				t.Errorf("close: %v", err)
			}
		case err := <-errs:
			t.Fatalf("dial: %v", err)
		}
	}
}

// With the default options, negotiate goes through the pooled client: the
// sockets a run's connections negotiated on stay open for the next run,
// which opens none of its own. Through http.DefaultClient, which keeps two
// idle connections per host, the second round needed four new ones.
func TestNegotiateReusesTheConnectionsOfTheRunBefore(t *testing.T) {
	const perRound = 6
	h, err := hub.New(hub.Options{}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	g := &negotiateGate{next: h, arrived: make(chan struct{}, perRound), sockets: map[string]bool{}}
	srv := localtest.Server(t, g)
	ctx := localtest.Ctx(t, 20*time.Second)
	g.round(t, ctx, srv.URL+hub.DefaultPath, perRound)
	g.round(t, ctx, srv.URL+hub.DefaultPath, perRound)
	if got := len(g.sockets); got != perRound {
		t.Errorf("two rounds of %d negotiated on %d sockets, want %d: the second round's reused the first's", perRound, got, perRound)
	}
}
