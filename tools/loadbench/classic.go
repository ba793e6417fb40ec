package main

import (
	"context"
	"os"
	"path/filepath"
)

// classicPair is hubprobePair's echo on classic ASP.NET SignalR over
// WebSockets: `hubprobe hub` serves the benchmark's Signalrbench hub at
// /signalr, probed by `hubprobe run` with an aspnet_signalr target.
func classicPair(o options, binary, dir string) pairSpec {
	return pairSpec{
		name: pairClassic,
		startServer: func(ctx context.Context) (*child, string, error) {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return nil, "", err
			}
			c, err := startHub(ctx, "hubprobe hub (classic)", addr, binary, "hub", "--listen", addr)
			return c, "http://" + addr + "/signalr", err
		},
		clientArgv: func(url string) ([]string, error) {
			file := filepath.Join(dir, "loadbench-classic.yml")
			if err := os.WriteFile(file, []byte(classicConfig(o, url)), 0o600); err != nil {
				return nil, err
			}
			return []string{binary, "run", "--config.file", file, "--scenario", "echo", "--output", "json"}, nil
		},
	}
}

// classicConfig is hubprobeConfig's echo on a classic target.
func classicConfig(o options, url string) string {
	return echoConfig(o, "service: aspnet_signalr\n    url: "+url)
}
