package floor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gorilla/websocket"
)

// ClientConfig is one open-loop echo run of the floor client.
type ClientConfig struct {
	URL                string        // ws://host:port/
	Connections        int           // connections opened before sending starts
	Window             time.Duration // how long the connections send
	Interval           time.Duration // each connection sends once per interval
	Size               int           // bytes per text frame, at least StampLen
	ConnectConcurrency int           // dials in flight at once
	ConnectTimeout     time.Duration // deadline of one dial and upgrade
	LossTimeout        time.Duration // how long to wait for replies after the last send
}

// StampLen is the size of the send timestamp at the head of every frame:
// decimal nanoseconds since the client started, zero-padded.
const StampLen = 20

// Report is what one client run measured. Its JSON keys match those of
// `hubprobe run --output json`, so one decoder reads both.
type Report struct {
	Connections    int     `json:"connections"`
	Sent           int64   `json:"sent"`
	Received       int64   `json:"received"`
	Lost           int64   `json:"lost"`
	Latency        Latency `json:"latency_seconds"`
	MaxSendLagSecs float64 `json:"max_send_lag_seconds"`
}

// Latency holds round-trip quantiles in seconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func (c ClientConfig) validate() error {
	switch {
	case c.Connections < 1:
		return fmt.Errorf("connections must be at least 1, got %d", c.Connections)
	case c.Window <= 0 || c.Interval <= 0:
		return fmt.Errorf("window and interval must be positive, got %s and %s", c.Window, c.Interval)
	case c.Size < StampLen:
		return fmt.Errorf("size must be at least %d bytes, got %d", StampLen, c.Size)
	case c.ConnectConcurrency < 1:
		return fmt.Errorf("connect concurrency must be at least 1, got %d", c.ConnectConcurrency)
	}
	return nil
}

type client struct {
	cfg      ClientConfig
	epoch    time.Time
	payload  []byte
	sent     atomic.Int64
	received atomic.Int64
	maxLag   time.Duration
	mu       sync.Mutex
	hist     *hdrhistogram.Histogram // microseconds
}

// RunClient connects, sends for the window on an open-loop schedule, waits
// for the last replies and closes everything it opened before returning.
func RunClient(ctx context.Context, cfg ClientConfig) (Report, error) {
	if err := cfg.validate(); err != nil {
		return Report{}, err
	}
	c := &client{cfg: cfg, epoch: time.Now(), hist: hdrhistogram.New(1, time.Minute.Microseconds(), 3)}
	c.payload = make([]byte, cfg.Size)
	for i := range c.payload {
		c.payload[i] = 'x'
	}
	conns, err := c.connectAll(ctx)
	closeConns := sync.OnceFunc(func() { closeAll(conns) })
	defer closeConns()
	if err != nil {
		return Report{}, err
	}
	stopWatch := context.AfterFunc(ctx, closeConns) // unblocks a stuck write
	defer stopWatch()
	var readers sync.WaitGroup
	for _, ws := range conns {
		readers.Go(func() { c.read(ws) })
	}
	c.pace(ctx, conns)
	c.drain(ctx)
	closeConns()
	readers.Wait()
	return c.report(len(conns)), ctx.Err()
}

func (c *client) connectAll(ctx context.Context) ([]*websocket.Conn, error) {
	d := websocket.Dialer{ReadBufferSize: BufferSize, WriteBufferSize: BufferSize, HandshakeTimeout: c.cfg.ConnectTimeout}
	conns := make([]*websocket.Conn, c.cfg.Connections)
	errs := make([]error, c.cfg.Connections)
	limit := make(chan struct{}, c.cfg.ConnectConcurrency)
	var wg sync.WaitGroup
	for i := range conns {
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			dctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
			defer cancel()
			ws, _, err := d.DialContext(dctx, c.cfg.URL, nil)
			conns[i], errs[i] = ws, err
		})
	}
	wg.Wait()
	opened := conns[:0]
	for _, ws := range conns {
		if ws != nil {
			opened = append(opened, ws)
		}
	}
	if failed := len(conns) - len(opened); failed > 0 {
		return opened, fmt.Errorf("%d of %d connections failed: %w", failed, len(conns), errors.Join(errs...))
	}
	return opened, nil
}

func closeAll(conns []*websocket.Conn) {
	for _, ws := range conns {
		_ = ws.Close()
	}
}
