package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/internal/peerhub"
	"github.com/philippseith/signalr"
)

// The peer pairs (-peer) run against a SignalR server neither side wrote,
// github.com/philippseith/signalr: hubprobe's probe, and the official
// JavaScript client (@microsoft/signalr in Node, permessage-deflate off)
// running the same open-loop echo, so that the probe is held to the best
// peer client measured in the same run on the same machine.

// thirdPartyKeepAlive is the server's keep-alive in the peer pairs: the
// library's own default, rather than the 2 s the tests use.
const thirdPartyKeepAlive = 15 * time.Second

// thirdPartyServer serves the benchmark hub on philippseith/signalr and
// prints "listening URL" once it does.
func thirdPartyServer(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("thirdparty-server", flag.ContinueOnError)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	srv, err := peerhub.Start(signalr.KeepAliveInterval(thirdPartyKeepAlive))
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "listening %s\n", srv.URL)
	<-ctx.Done()
	return nil
}

// hubprobeThirdPartyPair is hubprobePair's run against the third-party
// server.
func hubprobeThirdPartyPair(o options, binary, dir string) pairSpec {
	p := hubprobePair(o, binary, dir)
	p.name = pairHubprobeThirdParty
	p.startServer = func(ctx context.Context) (*child, string, error) {
		return startListening(ctx, "philippseith server", append(o.self, "thirdparty-server"))
	}
	return p
}

// jsPeerPair is the official JavaScript client against the third-party
// server. Its script needs `npm ci` in its folder first.
func jsPeerPair(o options, script string) pairSpec {
	return pairSpec{
		name: pairJSClient,
		startServer: func(ctx context.Context) (*child, string, error) {
			return startListening(ctx, "philippseith server", append(o.self, "thirdparty-server"))
		},
		clientArgv: func(url string) ([]string, error) {
			ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
			return []string{"node", script, url, strconv.Itoa(o.n), ms(o.window), ms(o.interval), strconv.Itoa(o.size),
				strconv.Itoa(o.concurrency), ms(o.lossTimeout)}, nil
		},
	}
}

// jsPeerScript finds the JavaScript client in the module loadbench runs in
// and checks that its packages are installed.
func jsPeerScript(ctx context.Context) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "tools", "loadbench", "jspeer")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@microsoft", "signalr")); err != nil {
		return "", errors.Join(fmt.Errorf("the JavaScript peer's packages are missing: run npm ci in %s", dir), err)
	}
	return filepath.Join(dir, "client.mjs"), nil
}
