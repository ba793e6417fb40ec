package main

import (
	"io"
	"log/slog"
	"time"

	"github.com/rs/zerolog"
)

func newLogger(w io.Writer, level, format string) zerolog.Logger {
	if format == "logfmt" {
		w = zerolog.ConsoleWriter{Out: w, NoColor: true, TimeFormat: time.RFC3339Nano}
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// slogFor bridges to libraries that log through log/slog (exporter-toolkit).
func slogFor(l zerolog.Logger) *slog.Logger {
	return slog.New(zerolog.NewSlogHandler(l))
}
