package webpubsubclient

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Defaults for the zero values of Options. The keep-alive figures are the
// official JavaScript client's (a ping after 20 s of silence, the
// connection given up after 120 s without a frame), so hubprobe loads the
// service as that client does; its one-second sequenceAck batching too.
const (
	DefaultHandshakeTimeout    = 15 * time.Second
	DefaultKeepAliveInterval   = 20 * time.Second
	DefaultServerTimeout       = 120 * time.Second
	DefaultMaxMessageSize      = 1 << 20
	DefaultSequenceAckInterval = time.Second
)

// EndpointUpgrade is the endpoint name under which the WebSocket upgrade's
// HTTP status is reported to Observer.HTTPResponse (Web PubSub has no
// negotiate step: the upgrade is the only HTTP exchange of a connection).
const EndpointUpgrade = "upgrade"

// Options configures Dial. Zero values take the defaults above.
type Options struct {
	// URL is the client endpoint, ws(s)://host[:port]/client/hubs/{hub}
	// (azure.ConnectionString.WebPubSubClientURL builds it); http(s) is
	// mapped to ws(s). Its query is kept.
	URL string
	// AccessToken is the client token, sent as the access_token query
	// parameter, as the service SDKs do. It never appears in an error.
	AccessToken string
	// Protocol is webpubsub.ProtocolJSON (the default; the reliable one is
	// a preview) or webpubsub.ProtocolJSONReliable.
	Protocol string
	// Headers are added to the WebSocket upgrade request.
	Headers http.Header
	// HTTPClient lends the upgrade its proxy and TLS settings when its
	// Transport is an *http.Transport.
	HTTPClient *http.Client

	// HandshakeTimeout bounds the upgrade and, separately, the wait for the
	// connected message; Dial's ctx bounds both together.
	HandshakeTimeout time.Duration
	// KeepAliveInterval is how long the client may stay silent before it
	// sends a ping frame.
	KeepAliveInterval time.Duration
	// ServerTimeout is how long the service may stay silent before the
	// connection is considered dead. The pings draw pongs, so a live
	// service is never silent that long.
	ServerTimeout time.Duration
	// WriteTimeout bounds the write of one frame; a write that cannot
	// finish in time ends the connection with clientconn.ErrServerTimeout.
	// Zero leaves writes bounded by their context alone.
	WriteTimeout time.Duration
	// RoundTripInterval is how often the connection times a WebSocket ping
	// to its pong and tells Observer.RoundTrip: at once, then every
	// interval (clientconn.DefaultRoundTripInterval).
	RoundTripInterval time.Duration
	// SequenceAckInterval is how often, on the reliable protocol, the
	// largest sequenceId received is acknowledged when anything arrived.
	SequenceAckInterval time.Duration
	// MaxMessageSize bounds one frame from the service.
	MaxMessageSize int64

	// Observer is told the bytes of every frame read and written and the
	// status of the upgrade.
	Observer clientconn.Observer
	// OnGroupMessage and OnServerMessage receive the messages of groups
	// and of the server (REST sends, event handler replies). They run on
	// the read goroutine, installed before the handshake so nothing is
	// missed; they must return quickly and must not wait for an ack or
	// call Close, which the read goroutine itself would have to serve.
	OnGroupMessage  func(Message)
	OnServerMessage func(Message)
}

// Message is one message delivered to the connection. It is passed by
// value, so handling it allocates nothing.
type Message struct {
	Group      string // the group for a group message, empty from the server
	FromUserID string // the sender's user id when the service names it
	DataType   webpubsub.DataType
	// Data is the payload as the sender gave it: JSON text, the text's
	// UTF-8 bytes, or the decoded binary bytes. It is valid only until the
	// handler returns (it lies in a buffer the next frame reuses); copy
	// what must be kept.
	Data []byte
	// SequenceID is the message's number on the reliable protocol, 0 on
	// the plain one.
	SequenceID uint64
}

// SendFlags modify a send.
type SendFlags uint8

const (
	// NoEcho keeps a group send from being delivered back to the sender.
	NoEcho SendFlags = 1 << iota
	// WaitAck sends the frame with an ackId and waits for the service's
	// ack; without it the send is fire-and-forget.
	WaitAck
)

func (o Options) withDefaults() (Options, error) {
	switch o.Protocol {
	case "":
		o.Protocol = webpubsub.ProtocolJSON
	case webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable:
	default:
		return o, fmt.Errorf("webpubsub client: subprotocol %q is not %s or %s", o.Protocol, webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable)
	}
	if o.URL == "" {
		return o, errors.New("webpubsub client: no URL")
	}
	o.HandshakeTimeout = clientconn.OrDefault(o.HandshakeTimeout, DefaultHandshakeTimeout)
	o.KeepAliveInterval = clientconn.OrDefault(o.KeepAliveInterval, DefaultKeepAliveInterval)
	o.ServerTimeout = clientconn.OrDefault(o.ServerTimeout, DefaultServerTimeout)
	o.SequenceAckInterval = clientconn.OrDefault(o.SequenceAckInterval, DefaultSequenceAckInterval)
	o.RoundTripInterval = clientconn.OrDefault(o.RoundTripInterval, clientconn.DefaultRoundTripInterval)
	o.MaxMessageSize = clientconn.OrDefault(o.MaxMessageSize, DefaultMaxMessageSize)
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.Observer == nil {
		o.Observer = clientconn.NopObserver{}
	}
	return o, nil
}
