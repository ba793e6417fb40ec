package aspnet

import (
	"errors"
	"fmt"
)

// ErrProtocol wraps every malformed-input error, so callers can tell bad
// bytes from the peer apart from I/O failures with errors.Is.
var ErrProtocol = errors.New("classic SignalR protocol error")

// ErrProtocolVersion is the error of a negotiate answer whose protocol
// version the jquery.signalR 2.4.3 client would refuse. It wraps ErrProtocol.
var ErrProtocolVersion = fmt.Errorf("%w: unsupported protocol version", ErrProtocol)

// Protocol versions. The 2.4.3 clients (JavaScript and .NET) send
// clientProtocol=2.1 ("the SignalR service knows the client will use the
// query string returned via the RedirectUrl"); a 2.x server clamps what it
// answers to 2.0, its ProtocolResolver's maximum, and so does Azure SignalR
// Service's redirect.
const (
	ClientProtocol = "2.1"
	ServerProtocol = "2.0"
)

// supportedProtocols are the versions the 2.4.3 JavaScript client accepts
// in a negotiate answer; redirects are honoured only from 2.0 on.
var (
	supportedProtocols         = []string{"1.5", "2.0", "2.1"}
	redirectSupportedProtocols = []string{"2.0", "2.1"}
)

// Transport names a classic transport as the transport query parameter
// spells it.
type Transport string

// The four classic transports.
const (
	WebSockets       Transport = "webSockets"
	ServerSentEvents Transport = "serverSentEvents"
	LongPolling      Transport = "longPolling"
	ForeverFrame     Transport = "foreverFrame"
)

// Transports lists every transport, in the order the JavaScript client
// tries them.
var Transports = []Transport{WebSockets, ForeverFrame, ServerSentEvents, LongPolling}

// ParseTransport returns the transport called name.
func ParseTransport(name string) (Transport, error) {
	for _, t := range Transports {
		if string(t) == name {
			return t, nil
		}
	}
	return "", fmt.Errorf("%w: unknown transport %q", ErrProtocol, truncate(name))
}

// Request paths, each after the connection's URL (/signalr by default).
const (
	PathNegotiate = "/negotiate"
	PathConnect   = "/connect"
	PathReconnect = "/reconnect"
	PathPoll      = "/poll"
	PathSend      = "/send"
	PathStart     = "/start"
	PathAbort     = "/abort"
	PathPing      = "/ping"
)

// Query parameters, and the form fields of a POST.
const (
	QueryTransport       = "transport"
	QueryClientProtocol  = "clientProtocol"
	QueryConnectionToken = "connectionToken"
	QueryConnectionData  = "connectionData"
	QueryMessageID       = "messageId"
	QueryGroupsToken     = "groupsToken"
	// QueryFrameID names the Forever Frame's iframe.
	QueryFrameID = "frameId"
	// QueryAccessToken carries the bearer token on WebSockets and
	// Server-Sent Events, which cannot send an Authorization header.
	QueryAccessToken = "access_token"
	// FormData is the form field of a /send POST that holds the message.
	FormData = "data"
)

// Azure SignalR Service in ASP.NET mode: the app server's negotiate sends
// clients to the service's client endpoint, with the app's original path
// (asrs.op) and a request id in the query string.
const (
	AzureClientPath        = "/aspnetclient"
	AzureQueryOriginalPath = "asrs.op"
	AzureQueryRequestID    = "asrs_request_id"
)

// Fixed answers of the server, byte for byte as PersistentConnection writes
// them (with the spaces).
const (
	StartResponse = `{ "Response": "started" }`
	PingResponse  = `{ "Response": "pong" }`
)

// maxQuoted bounds how much of a peer's text an error quotes.
const maxQuoted = 40

func truncate(s string) string {
	if len(s) > maxQuoted {
		return s[:maxQuoted] + "…"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
