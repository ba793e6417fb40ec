package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// streamingEcho: each sender opens StreamingEcho(upload, delayMs) and sends
// its payloads as upload stream items; the hub streams each item back, so
// one item is one delivery. Streams end when the run closes its clients.
type streamingEcho struct {
	delayMs int64
	uploads []*signalrclient.Upload
}

func newStreamingEcho(cfg config.Scenario) Kind {
	return &streamingEcho{delayMs: cfg.StreamItemDelay.Milliseconds()}
}

func (s *streamingEcho) Prepare(ctx context.Context, r *Run) error {
	delay := json.RawMessage(strconv.FormatInt(s.delayMs, 10))
	s.uploads = make([]*signalrclient.Upload, r.Senders())
	for i := range s.uploads {
		conn := r.Clients[i].Conn
		up := conn.NewUpload()
		stream, err := conn.Stream(ctx, "StreamingEcho", []json.RawMessage{delay}, up)
		if err != nil {
			return fmt.Errorf("connection %d: StreamingEcho: %w", i, err)
		}
		s.uploads[i] = up
		go func() {
			for item := range stream.Items() {
				r.Delivered(i, item)
			}
		}()
	}
	return nil
}

func (s *streamingEcho) Send(ctx context.Context, _ *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, s.uploads[sender].Send(ctx, payload)
}
