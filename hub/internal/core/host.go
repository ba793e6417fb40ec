package core

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure/oidc"
	"github.com/hubprobe/hubprobe/internal/grid"
)

// Defaults match ASP.NET Core SignalR's HubOptions where ASP.NET has one.
const (
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultClientTimeout     = 30 * time.Second
	DefaultSendQueueSize     = 256
)

// ShuttingDownText is every protocol's answer to a connection that comes
// after Close began.
const ShuttingDownText = "The hub is shutting down."

// CloseGrace bounds how long a closing connection may take to flush its
// queue and last message before its socket is cut.
const CloseGrace = 2 * time.Second

// Config is what every protocol of a Host shares; zero fields take the
// defaults above. The hub package documents each field (hub.Options).
type Config struct {
	Logger            zerolog.Logger
	SendQueueSize     int
	KeepAliveInterval time.Duration
	ClientTimeout     time.Duration
	// ConnectionQuota is the concurrent connection limit; 0 means none.
	ConnectionQuota  int
	MessageRateLimit float64
	DeliveryDelay    time.Duration
	// IdleTimeout cuts the socket of a connection whose client sent
	// nothing (not even a ping) for this long, as an idle timeout of a
	// load balancer would; 0 never.
	IdleTimeout time.Duration

	AccessKey        string
	EntraIssuer      string
	EntraHTTPClient  *http.Client
	DisableLocalAuth bool
}

func (c Config) withDefaults() Config {
	if c.SendQueueSize == 0 {
		c.SendQueueSize = DefaultSendQueueSize
	}
	if c.KeepAliveInterval == 0 {
		c.KeepAliveInterval = DefaultKeepAliveInterval
	}
	if c.ClientTimeout == 0 {
		c.ClientTimeout = DefaultClientTimeout
	}
	return c
}

// heartbeatPeriod is how often timeouts and keep-alives are checked: once a
// second like ASP.NET, or faster when the configured intervals are short.
func (c Config) heartbeatPeriod() time.Duration {
	p := time.Second
	for _, d := range []time.Duration{c.KeepAliveInterval / 4, c.ClientTimeout / 4, c.IdleTimeout / 4} {
		if d > 0 && d < p {
			p = d
		}
	}
	return max(p, 5*time.Millisecond)
}

// Host is the ground every protocol of the reference hub stands on: its
// lifecycle (admitting connections until Close, then waiting for their
// goroutines), the one lock over every protocol's rosters, the hub's
// clock, slow mode, the connection quota, authorization and the metrics.
type Host struct {
	Config  Config // with the defaults filled in
	Log     zerolog.Logger
	Metrics *Metrics
	// Mu guards every protocol's spaces, rosters and open connections, and
	// whether the hub is closed.
	Mu sync.RWMutex
	// Conns counts the goroutines that serve connections (readers, streams,
	// pushes); Close waits for them.
	Conns sync.WaitGroup

	key    []byte         // see azureKey; nil when the Azure emulation is off
	entra  *oidc.Verifier // nil without an Entra issuer
	quota  quota
	epoch  time.Time
	delay  atomic.Int64 // the delivery delay in nanoseconds
	closed bool         // guarded by Mu

	stop      chan struct{}
	bg        sync.WaitGroup // the heartbeat and the slow-mode queues
	closeOnce sync.Once
}

// NewHost builds a host counting into m. It runs no goroutine until Go or
// Start.
func NewHost(cfg Config, m *Metrics) (*Host, error) {
	cfg = cfg.withDefaults()
	entra, err := newEntraVerifier(cfg)
	if err != nil {
		return nil, err
	}
	h := &Host{
		Config:  cfg,
		Log:     cfg.Logger,
		Metrics: m,
		key:     azureKey(cfg),
		entra:   entra,
		quota:   quota{limit: cfg.ConnectionQuota},
		epoch:   time.Now(),
		stop:    make(chan struct{}),
	}
	h.delay.Store(int64(cfg.DeliveryDelay))
	return h, nil
}

// Now is the hub's monotonic clock in nanoseconds.
func (h *Host) Now() int64 { return int64(time.Since(h.epoch)) }

// SetDeliveryDelay changes the slow-mode delay for messages sent from now on.
func (h *Host) SetDeliveryDelay(d time.Duration) { h.delay.Store(int64(max(d, 0))) }

// DeliveryDelay is the slow-mode delay in nanoseconds; 0 delivers at once.
func (h *Host) DeliveryDelay() int64 { return h.delay.Load() }

// Go runs a background goroutine of the hub (a slow-mode queue, the
// heartbeat) until stop is closed by Close.
func (h *Host) Go(run func(stop <-chan struct{})) {
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		run(h.stop)
	}()
}

// Start runs the heartbeat, the hub's one timer, as in ASP.NET: beat sends
// keep-alives, closes silent clients and expires what waits too long, at
// the hub clock's now. It beats on the process's grid (internal/grid), so
// an embedded hub's heartbeat shares the probe's wake-ups.
func (h *Host) Start(beat func(now int64)) {
	h.Go(func(stop <-chan struct{}) {
		period := h.Config.heartbeatPeriod()
		t := time.NewTimer(grid.UntilNext(period))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				beat(h.Now())
				t.Reset(grid.UntilNext(period))
			}
		}
	})
}

// Close admits no more connections, asks every open one to close
// (closeAll, which each protocol contributes to), stops the background
// goroutines and waits for every connection's goroutines. Later calls do
// nothing.
func (h *Host) Close(closeAll func()) {
	h.closeOnce.Do(func() {
		h.Mu.Lock()
		h.closed = true
		h.Mu.Unlock()
		closeAll()
		close(h.stop)
		h.bg.Wait()
		h.Conns.Wait()
	})
}

// IsClosed reports whether Close has begun.
func (h *Host) IsClosed() bool {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	return h.closed
}

// NotePanic counts a panic recovered on one of the hub's goroutines and
// logs it with its stack.
func (h *Host) NotePanic(log zerolog.Logger, r any) {
	h.Metrics.Panics.Inc()
	log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("recovered from panic")
}

// NewID returns 128 random bits, URL-safe, like ASP.NET's connection ids.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
