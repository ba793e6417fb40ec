package webpubsubclient

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// The defaults of Options that are the Web PubSub client's own; the
// others are clientconn's (clientconn.DefaultHandshakeTimeout,
// clientconn.DefaultMaxMessageSize, clientconn.DefaultRoundTripInterval).
// The keep-alive figures are the official JavaScript client's (a ping
// after 20 s of silence, the connection given up after 120 s without a
// frame), so hubprobe loads the service as that client does; its
// one-second sequenceAck batching too.
const (
	DefaultKeepAliveInterval   = 20 * time.Second
	DefaultServerTimeout       = 120 * time.Second
	DefaultSequenceAckInterval = time.Second
)

// EndpointUpgrade is the endpoint name under which the WebSocket upgrade's
// HTTP status is reported to Observer.HTTPResponse (Web PubSub has no
// negotiate step: the upgrade is the only HTTP exchange of a connection).
const EndpointUpgrade = "upgrade"

// Options configures Dial. Zero values take the defaults.
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
	// Settings are what every client takes alike (clientconn.Settings).
	// Here HandshakeTimeout bounds the upgrade and, separately, the wait
	// for the connected message; Dial's ctx bounds both together. The
	// keep-alive sends a ping frame, and the pings draw pongs, so a live
	// service is never silent for ServerTimeout. WriteTimeout bounds the
	// write of one frame. RoundTripInterval times a WebSocket ping to its
	// pong. MaxMessageSize bounds one frame from the service. HTTPClient
	// serves only to lend the upgrade its proxy and TLS settings. Observer
	// is told the bytes of every frame read and written and the status of
	// the upgrade.
	clientconn.Settings
	// SequenceAckInterval is how often, on the reliable protocol, the
	// largest sequenceId received is acknowledged when anything arrived.
	SequenceAckInterval time.Duration

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
	o.Settings = o.WithDefaults(clientconn.Settings{KeepAliveInterval: DefaultKeepAliveInterval, ServerTimeout: DefaultServerTimeout})
	o.SequenceAckInterval = clientconn.OrDefault(o.SequenceAckInterval, DefaultSequenceAckInterval)
	return o, nil
}
