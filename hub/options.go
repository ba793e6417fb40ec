package hub

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/azure/oidc"
	"github.com/hubprobe/hubprobe/hub/internal/aspnethub"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/signalrhub"
	"github.com/hubprobe/hubprobe/hub/internal/wpshub"
)

// Defaults match ASP.NET Core SignalR's HubOptions and LongPollingOptions
// where ASP.NET has one.
const (
	DefaultPath              = signalrhub.DefaultPath
	DefaultMaxMessageSize    = signalrhub.DefaultMaxMessageSize
	DefaultHandshakeTimeout  = signalrhub.DefaultHandshakeTimeout
	DefaultKeepAliveInterval = core.DefaultKeepAliveInterval
	DefaultClientTimeout     = core.DefaultClientTimeout
	DefaultSendQueueSize     = core.DefaultSendQueueSize
	DefaultPollTimeout       = signalrhub.DefaultPollTimeout
)

// The classic hub's BatchTest, hubprobe's own method beside the
// benchmark's (tools/classictransports calls it): its name, and the first
// argument of a batch's last Measure.
const (
	AspNetBatchTestMethod = aspnethub.BatchTestMethod
	AspNetBatchTestLast   = aspnethub.BatchTestLast
)

// The resources Microsoft Entra ID issues tokens for, one per service: a
// token's aud names the service it is for.
const (
	SignalRResource   = core.SignalRResource
	WebPubSubResource = core.WebPubSubResource
)

// LocalAuthDisabledText is the 401 answer to a token signed with an
// access key when local auth is disabled.
const LocalAuthDisabledText = core.LocalAuthDisabledText

// ConnectionsPerUnit is Azure SignalR Service's concurrent connection quota
// per Standard unit.
const ConnectionsPerUnit = 1000

// Options configure a Hub. Zero fields take the defaults above.
type Options struct {
	// Path is where the hub is served; negotiate is at Path+"/negotiate".
	// Its last segment, lower-cased, is the hub's name on the Azure
	// endpoints (signalrbench by default).
	Path string
	// MaxMessageSize is the largest hub message (one record) accepted from a
	// client, in bytes. A larger one closes the connection with an error.
	MaxMessageSize int64
	// HandshakeTimeout is how long a new connection may take to send its
	// handshake request.
	HandshakeTimeout time.Duration
	// KeepAliveInterval is how long the hub stays silent towards a client
	// before it sends a Ping (not on Long Polling, whose polls keep it alive).
	KeepAliveInterval time.Duration
	// ClientTimeout closes a connection from which nothing (not even a Ping)
	// arrived for this long; a Long Polling client must instead not leave
	// the hub without a poll for this long.
	ClientTimeout time.Duration
	// SendQueueSize bounds the messages waiting to be written to one client;
	// a client that lets it fill up is disconnected as a slow consumer.
	SendQueueSize int
	// PollTimeout is how long a Long Polling request waits for data before
	// it is answered empty (200) and the client polls again.
	PollTimeout time.Duration
	// DeliveryDelay holds every RecordLatency, streamed echo, Web PubSub
	// message and classic Measure call back for this long before delivery
	// ("slow mode", for tests and demonstrations).
	DeliveryDelay time.Duration
	// Logger receives connection-level events; the zero value logs nothing.
	Logger zerolog.Logger

	// AccessKey, when set, makes the hub also emulate Azure SignalR Service:
	// client endpoints at /client/negotiate?hub= and /client/?hub= that
	// want a client token signed with this key, and the REST API under
	// /api/v1/hubs/ and /api/hubs/ that wants a token per request.
	AccessKey string
	// RedirectNegotiate makes Path+"/negotiate" answer like an app server
	// in Azure SignalR Service's default mode: {"url": <this hub's
	// /client/?hub=...>, "accessToken": <client token>}; and the classic
	// /signalr/negotiate like one in its ASP.NET mode: {"RedirectUrl":
	// <this hub's /aspnetclient?...>, "AccessToken": <client token>}.
	// Needs AccessKey (or EntraIssuer).
	RedirectNegotiate bool
	// Units sets the concurrent connection quota to ConnectionsPerUnit per
	// unit, as the service's Standard tier does; 0 means no quota.
	Units int
	// ConnectionQuota overrides the quota Units gives (0 keeps it). Past
	// the quota, negotiate and connect answer 429 "Connection count
	// reaches limit.".
	ConnectionQuota int
	// MessageRateLimit caps the messages each hub name accepts per second,
	// from clients and REST sends together (0 = no cap; it may be below
	// 1). A client over it is closed with "Message count reaches limit.",
	// a REST send is answered 429.
	MessageRateLimit float64
	// WebPubSubEventHandler is the event handler URL template of the Web
	// PubSub emulation ({hub} and {event} are filled in, as the service
	// does): user events go there as CloudEvents. Empty sends none, and an
	// event with an ackId is acked InvocationFailed. Needs AccessKey.
	WebPubSubEventHandler string

	// EntraIssuer, an https URL, makes the Azure emulation also accept
	// Microsoft Entra ID bearer tokens from that OpenID issuer (RS256, keys
	// from its discovery document by kid) on both REST APIs and on
	// :generateToken, for the services' resources (SignalRResource,
	// WebPubSubResource). It turns the emulation on without AccessKey.
	EntraIssuer string
	// EntraHTTPClient fetches the issuer's discovery document and keys;
	// nil trusts the system's roots (SSL_CERT_FILE can point elsewhere).
	EntraHTTPClient *http.Client
	// IdleTimeout cuts the socket of a connection whose client sent
	// nothing, not even a ping, for this long, as a load balancer's idle
	// timeout would (not on classic ASP.NET SignalR); 0 never.
	IdleTimeout time.Duration
	// DropEvery ends one open connection every DropEvery, as DropHow
	// says (Drop), so that a canary's held connections show their drops:
	// a standing drill. 0 never.
	DropEvery time.Duration
	DropHow   Drill

	// DisableLocalAuth refuses every token signed with AccessKey (401,
	// LocalAuthDisabledText), as a service with disableLocalAuth does: the
	// REST APIs take Entra tokens only, and clients connect with the
	// tokens :generateToken (or the redirect) issues, which the hub signs
	// with a key of its own. Upstream events carry no ce-signature. Needs
	// EntraIssuer.
	DisableLocalAuth bool
}

// checked is o with its path normalized, or why it cannot serve; the parts
// of the hub fill in the defaults of their own settings.
func (o Options) checked() (Options, error) {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	o.Path = strings.TrimSuffix(o.Path, "/")
	if !strings.HasPrefix(o.Path, "/") {
		return o, fmt.Errorf("hub path %q must start with /", o.Path)
	}
	return o, o.validate()
}

// hostConfig is what every protocol shares.
func (o Options) hostConfig() core.Config {
	return core.Config{
		Logger:            o.Logger,
		SendQueueSize:     o.SendQueueSize,
		KeepAliveInterval: o.KeepAliveInterval,
		ClientTimeout:     o.ClientTimeout,
		ConnectionQuota:   o.connectionQuota(),
		MessageRateLimit:  o.MessageRateLimit,
		DeliveryDelay:     o.DeliveryDelay,
		IdleTimeout:       o.IdleTimeout,
		AccessKey:         o.AccessKey,
		EntraIssuer:       o.EntraIssuer,
		EntraHTTPClient:   o.EntraHTTPClient,
		DisableLocalAuth:  o.DisableLocalAuth,
	}
}

// signalRConfig is the SignalR side's own.
func (o Options) signalRConfig() signalrhub.Config {
	return signalrhub.Config{
		Path:              o.Path,
		MaxMessageSize:    o.MaxMessageSize,
		HandshakeTimeout:  o.HandshakeTimeout,
		PollTimeout:       o.PollTimeout,
		RedirectNegotiate: o.RedirectNegotiate,
	}
}

// under reports whether path is base or below it.
func under(path, base string) bool { return path == base || strings.HasPrefix(path, base+"/") }

// classicConfig is the classic side's own.
func (o Options) classicConfig() aspnethub.Config {
	return aspnethub.Config{RedirectNegotiate: o.RedirectNegotiate}
}

func (o Options) validate() error {
	switch {
	case o.MaxMessageSize < 0:
		return fmt.Errorf("max message size %d must not be negative", o.MaxMessageSize)
	case o.HandshakeTimeout < 0, o.KeepAliveInterval < 0, o.ClientTimeout < 0, o.DeliveryDelay < 0, o.PollTimeout < 0,
		o.IdleTimeout < 0, o.DropEvery < 0:
		return fmt.Errorf("hub timeouts and delays must not be negative")
	case o.SendQueueSize < 0:
		return fmt.Errorf("send queue size %d must not be negative", o.SendQueueSize)
	case o.Units < 0 || o.ConnectionQuota < 0:
		return fmt.Errorf("units %d and connection quota %d must not be negative", o.Units, o.ConnectionQuota)
	case o.MessageRateLimit < 0 || o.MessageRateLimit != o.MessageRateLimit:
		return fmt.Errorf("message rate limit %v must be a number not below 0", o.MessageRateLimit)
	case o.DropEvery > 0 && !slices.Contains(Drills, o.DropHow):
		return fmt.Errorf("a standing drill needs how to drop: one of %v, not %q", Drills, o.DropHow)
	case o.RedirectNegotiate && !o.EmulatesAzure():
		return fmt.Errorf("redirecting negotiate to the Azure endpoints needs an access key or an Entra issuer")
	case under(o.Path, aspnethub.DefaultPath):
		return fmt.Errorf("hub path %q collides with the classic ASP.NET SignalR endpoint %s", o.Path, aspnethub.DefaultPath)
	case o.EmulatesAzure() && (under(o.Path, "/client") || under(o.Path, aspnet.AzureClientPath) || strings.HasPrefix(o.Path, "/api/")):
		return fmt.Errorf("hub path %q collides with the Azure endpoints /client/, %s and /api/", o.Path, aspnet.AzureClientPath)
	case o.WebPubSubEventHandler != "" && !o.EmulatesAzure():
		return fmt.Errorf("a Web PubSub event handler needs an access key or an Entra issuer")
	case o.WebPubSubEventHandler != "" && wpshub.CheckEventHandler(o.WebPubSubEventHandler) != nil:
		return fmt.Errorf("the Web PubSub event handler: %v", wpshub.CheckEventHandler(o.WebPubSubEventHandler))
	case o.EmulatesAzure() && !signalrhub.ValidHubName(signalrhub.HubName(o.Path)):
		return fmt.Errorf("hub path %q must end in a valid Azure hub name (a letter, then letters, digits or '_')", o.Path)
	}
	return o.validateEntra()
}

func (o Options) validateEntra() error {
	switch {
	case o.DisableLocalAuth && o.EntraIssuer == "":
		return fmt.Errorf("disabling local auth needs an Entra issuer: nothing could call the REST APIs")
	case o.EntraIssuer != "":
		if err := oidc.CheckIssuer(o.EntraIssuer); err != nil {
			return fmt.Errorf("the Entra issuer: %w", err)
		}
	}
	return nil
}

// EmulatesAzure reports whether the hub serves the Azure services' client
// endpoints and REST APIs: with an access key, an Entra issuer or both.
func (o Options) EmulatesAzure() bool { return o.AccessKey != "" || o.EntraIssuer != "" }

// connectionQuota is the concurrent connection limit; 0 means none.
func (o Options) connectionQuota() int {
	if o.ConnectionQuota > 0 {
		return o.ConnectionQuota
	}
	return o.Units * ConnectionsPerUnit
}
