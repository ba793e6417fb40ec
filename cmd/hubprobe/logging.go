package main

import (
	"io"
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
