package hub

import (
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Defaults match ASP.NET Core SignalR's HubOptions where ASP.NET has one.
const (
	DefaultPath              = "/signalrbench"
	DefaultMaxMessageSize    = 32 * 1024
	DefaultHandshakeTimeout  = 15 * time.Second
	DefaultKeepAliveInterval = 15 * time.Second
	DefaultClientTimeout     = 30 * time.Second
	DefaultSendQueueSize     = 256
)

// negotiateTTL bounds how long a negotiated connection may wait for its
// transport before its token is forgotten.
const negotiateTTL = 15 * time.Second

// Options configure a Hub. Zero fields take the defaults above.
type Options struct {
	// Path is where the hub is served; negotiate is at Path+"/negotiate".
	Path string
	// MaxMessageSize is the largest hub message (one record) accepted from a
	// client, in bytes. A larger one closes the connection with an error.
	MaxMessageSize int64
	// HandshakeTimeout is how long a new connection may take to send its
	// handshake request.
	HandshakeTimeout time.Duration
	// KeepAliveInterval is how long the hub stays silent towards a client
	// before it sends a Ping.
	KeepAliveInterval time.Duration
	// ClientTimeout closes a connection from which nothing (not even a Ping)
	// arrived for this long.
	ClientTimeout time.Duration
	// SendQueueSize bounds the messages waiting to be written to one client;
	// a client that lets it fill up is disconnected as a slow consumer.
	SendQueueSize int
	// DeliveryDelay holds every RecordLatency and streamed echo back for this
	// long before delivery ("slow mode", for tests and demonstrations).
	DeliveryDelay time.Duration
	// Logger receives connection-level events; the zero value logs nothing.
	Logger zerolog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	o.Path = strings.TrimSuffix(o.Path, "/")
	if !strings.HasPrefix(o.Path, "/") {
		return o, fmt.Errorf("hub path %q must start with /", o.Path)
	}
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.KeepAliveInterval == 0 {
		o.KeepAliveInterval = DefaultKeepAliveInterval
	}
	if o.ClientTimeout == 0 {
		o.ClientTimeout = DefaultClientTimeout
	}
	if o.SendQueueSize == 0 {
		o.SendQueueSize = DefaultSendQueueSize
	}
	return o, o.validate()
}

func (o Options) validate() error {
	switch {
	case o.MaxMessageSize < 0:
		return fmt.Errorf("max message size %d must not be negative", o.MaxMessageSize)
	case o.HandshakeTimeout < 0, o.KeepAliveInterval < 0, o.ClientTimeout < 0, o.DeliveryDelay < 0:
		return fmt.Errorf("hub timeouts and delays must not be negative")
	case o.SendQueueSize < 0:
		return fmt.Errorf("send queue size %d must not be negative", o.SendQueueSize)
	}
	return nil
}

// heartbeatPeriod is how often timeouts and keep-alives are checked: once a
// second like ASP.NET, or faster when the configured intervals are short.
func (o Options) heartbeatPeriod() time.Duration {
	p := time.Second
	for _, d := range []time.Duration{o.KeepAliveInterval / 4, o.ClientTimeout / 4} {
		if d < p {
			p = d
		}
	}
	return max(p, 5*time.Millisecond)
}
