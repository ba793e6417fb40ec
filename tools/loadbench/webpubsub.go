package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// webPubSubPair is the Web PubSub upstream echo: `hubprobe hub` with an
// access key serves the Web PubSub client endpoint and posts every event
// to the event handler, which `hubprobe run` serves itself
// (--webpubsub.listen-address) and answers with the same data. The hub's
// CPU thus holds one HTTP request per message, the probe's the handler's
// answer to it.
func webPubSubPair(o options, binary, dir string) pairSpec {
	var handler string // the address the run's event handler listens on, new per server
	return pairSpec{
		name: pairWebPubSub,
		startServer: func(ctx context.Context) (*child, string, error) {
			addr, err := freeLoopbackAddr()
			if err == nil {
				handler, err = freeLoopbackAddr()
			}
			if err != nil {
				return nil, "", err
			}
			keyFile := filepath.Join(dir, "webpubsub.key")
			if err := os.WriteFile(keyFile, []byte(webPubSubKey), 0o600); err != nil {
				return nil, "", err
			}
			c, err := startHub(ctx, "hubprobe hub (Web PubSub)", addr, binary, "hub", "--listen", addr, "--access-key-file", keyFile,
				"--webpubsub.event-handler", "http://"+handler+"/webpubsub/{hub}/events")
			return c, "http://" + addr, err
		},
		clientArgv: func(endpoint string) ([]string, error) {
			file := filepath.Join(dir, "loadbench-webpubsub.yml")
			if err := os.WriteFile(file, []byte(webPubSubConfig(o, endpoint)), 0o600); err != nil {
				return nil, err
			}
			return []string{binary, "run", "--config.file", file, "--scenario", "echo", "--output", "json",
				"--webpubsub.listen-address", handler}, nil
		},
	}
}

// webPubSubKey signs the benchmark's tokens and events; loopback only.
const webPubSubKey = "loadbench-webpubsub-access-key"

// webPubSubConfig is hubprobeConfig's echo on a Web PubSub target.
func webPubSubConfig(o options, endpoint string) string {
	return echoConfig(o, fmt.Sprintf("service: webpubsub\n    connection_string: \"Endpoint=%s;AccessKey=%s;Version=1.0;\"\n    hub: loadbench",
		endpoint, webPubSubKey))
}
