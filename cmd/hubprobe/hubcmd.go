package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/daemon"
	"github.com/hubprobe/hubprobe/hub"
)

// hubFlags are the settings of `hubprobe hub`: those an embedded hub has
// in the config, and where to serve.
type hubFlags struct {
	listen        string
	metrics       bool
	accessKeyFile string
	pollTimeout   time.Duration
	// wpsEventHandler is where the Web PubSub emulation sends user events.
	wpsEventHandler string
	settings        config.EmbeddedHub
}

// options turns the flags into hub options, reading the access key.
func (f hubFlags) options(log zerolog.Logger) (hub.Options, error) {
	if f.accessKeyFile != "" {
		key, err := config.ReadSecretFile(f.accessKeyFile)
		if err != nil {
			return hub.Options{}, fmt.Errorf("--access-key-file: %w", err)
		}
		f.settings.AccessKey = config.Secret(key)
	}
	opts := daemon.HubOptions(f.settings)
	opts.Logger, opts.PollTimeout, opts.WebPubSubEventHandler = log, f.pollTimeout, f.wpsEventHandler
	return opts, nil
}

// serveHub runs the reference hub on its own until ctx ends.
func serveHub(ctx context.Context, f hubFlags, stderr io.Writer, log zerolog.Logger) int {
	opts, err := f.options(log)
	if err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	srv, err := hub.NewStandalone(opts, f.listen, f.metrics)
	if err != nil { // the options are wrong: a usage error
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitUsage
	}
	log.Info().Str("listen", f.listen).Bool("azure_emulation", opts.EmulatesAzure()).Str("entra_issuer", opts.EntraIssuer).Bool("local_auth", !opts.DisableLocalAuth).
		Int("connection_quota", f.settings.ConnectionQuota).Int("units", f.settings.Units).Float64("message_rate_limit", f.settings.MessageRateLimit).
		Msg("reference hub serving /signalrbench")
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintln(stderr, "hubprobe:", err)
		return exitFailed
	}
	return exitOK
}
