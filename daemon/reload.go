package daemon

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Reload re-reads the configuration file and applies it. A bad file keeps
// the running config (hubprobe_config_last_reload_successful reports it).
func (d *Daemon) Reload() error {
	log, path := d.opts.Logger, d.opts.ConfigFile
	if path == "" {
		return errors.New("no --config.file to reload: running the embedded default")
	}
	if err := d.config.Reload(path); err != nil {
		log.Error().Str("err", err.Error()).Msg("config reload failed; keeping the running config")
		return err
	}
	if err := d.Apply(d.config.Get()); err != nil {
		log.Error().Str("err", err.Error()).Msg("applying the reloaded config failed")
		return err
	}
	log.Info().Str("file", path).Msg("config reloaded")
	return nil
}

// ReloadOnSIGHUP reloads on every SIGHUP until ctx ends.
func (d *Daemon) ReloadOnSIGHUP(ctx context.Context) {
	log := d.opts.Logger
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			log.Info().Msg("SIGHUP: reloading config")
			_ = d.Reload()
		}
	}
}
