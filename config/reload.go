package config

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// SafeConfig holds the current configuration for concurrent readers and
// swaps it atomically on a successful reload.
type SafeConfig struct {
	kinds Kinds

	mu  sync.RWMutex
	cfg *Config
	sum [sha256.Size]byte // of the loaded file and its resolved secrets; zero after Set

	reloadSuccess   prometheus.Gauge
	reloadTimestamp prometheus.Gauge
}

// NewSafeConfig creates an empty SafeConfig whose reload gauges are
// registered with reg (nil leaves them unregistered). kinds is passed to Load.
func NewSafeConfig(reg prometheus.Registerer, kinds Kinds) *SafeConfig {
	f := promauto.With(reg)
	return &SafeConfig{
		kinds: kinds,
		reloadSuccess: f.NewGauge(prometheus.GaugeOpts{
			Name: "hubprobe_config_last_reload_successful",
			Help: "Whether the last configuration reload attempt was successful.",
		}),
		reloadTimestamp: f.NewGauge(prometheus.GaugeOpts{
			Name: "hubprobe_config_last_reload_success_timestamp_seconds",
			Help: "Timestamp of the last successful configuration reload.",
		}),
	}
}

// Get returns the current configuration. The pointer stays the same until a
// reload changes something, so callers can compare it to see whether to
// restart their schedules. Treat the result as read-only.
func (s *SafeConfig) Get() *Config {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cfg
}

// Set replaces the configuration, e.g. with Default() when no file is given.
// The next Reload always swaps in the file's configuration.
func (s *SafeConfig) Set(c *Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg, s.sum = c, [sha256.Size]byte{}
}

// LoadOrDefault loads the file at path or, when path is empty, the embedded
// default; a later Reload of a file replaces it.
func (s *SafeConfig) LoadOrDefault(path string) error {
	if path == "" {
		cfg, err := LoadOrDefault("", s.kinds)
		if err != nil {
			return err
		}
		s.Set(cfg)
		return nil
	}
	return s.Reload(path)
}

// Reload loads path. On error the current configuration stays and
// hubprobe_config_last_reload_successful drops to 0. When neither the file
// nor the secrets it names changed, the current *Config is kept but the
// reload still counts as successful.
func (s *SafeConfig) Reload(path string) (err error) {
	defer func() {
		if err != nil {
			s.reloadSuccess.Set(0)
			return
		}
		s.reloadSuccess.Set(1)
		s.reloadTimestamp.Set(float64(time.Now().UnixNano()) / 1e9)
	}()
	data, err := yamldecode.ReadFile(path)
	if err != nil {
		return err
	}
	cfg, err := Parse(data, path, s.kinds)
	if err != nil {
		return err
	}
	sum := checksum(data, cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg == nil || sum != s.sum {
		s.cfg, s.sum = cfg, sum
	}
	return nil
}

// checksum covers the file and the resolved secrets, so a rotated
// access_token_file or connection_string_file, or a changed environment variable is picked up even
// when the config file itself is unchanged.
func checksum(data []byte, cfg *Config) [sha256.Size]byte {
	h := sha256.New()
	h.Write(data)
	for _, t := range cfg.Targets {
		h.Write([]byte{0})
		h.Write([]byte(t.AccessToken))
		h.Write([]byte{0})
		h.Write([]byte(t.ConnectionString))
		h.Write([]byte{0})
		h.Write([]byte(t.EmbeddedHub.AccessKey))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
