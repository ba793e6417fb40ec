package aspnet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// Negotiate is the answer to GET {url}/negotiate: a connection offer, or
// (from protocol 2.0 on) a redirect with RedirectURL and AccessToken, as
// Azure SignalR Service's ASP.NET mode sends, or an Error.
type Negotiate struct {
	URL             string `json:"Url"`
	ConnectionToken string
	ConnectionID    string `json:"ConnectionId"`
	// KeepAliveTimeout is nil when the server sends no keep-alives.
	KeepAliveTimeout        *float64
	DisconnectTimeout       float64
	ConnectionTimeout       float64
	TryWebSockets           bool
	ProtocolVersion         string
	TransportConnectTimeout float64
	LongPollDelay           float64

	RedirectURL string `json:"RedirectUrl"`
	AccessToken string
	Error       string
	// AvailableTransports is only sent by ASP.NET Core SignalR, which the
	// classic client refuses.
	AvailableTransports json.RawMessage `json:"availableTransports"`
}

// IsRedirect reports whether n sends the client on to RedirectURL.
func (n *Negotiate) IsRedirect() bool { return n.RedirectURL != "" }

// DecodeNegotiate decodes a negotiate answer and checks it as the
// jquery.signalR 2.4.3 client does: a Core server's answer is refused, the
// protocol version must be one the client supports (ErrProtocolVersion
// otherwise), an error or a redirect counts from 2.0 on, and an offer
// needs a connection token, id and URL.
func DecodeNegotiate(data []byte) (Negotiate, error) {
	var n Negotiate
	if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		return n, fmt.Errorf("%w: the negotiate answer is not a JSON object", ErrProtocol)
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return n, fmt.Errorf("%w: invalid negotiate answer: %v", ErrProtocol, err)
	}
	err := n.check()
	return n, err
}

func (n *Negotiate) check() error {
	if n.AvailableTransports != nil {
		return fmt.Errorf("%w: the server is an ASP.NET Core SignalR server", ErrProtocol)
	}
	if !contains(supportedProtocols, n.ProtocolVersion) {
		return fmt.Errorf("%w %q (the client speaks %s)", ErrProtocolVersion, truncate(n.ProtocolVersion), ClientProtocol)
	}
	if contains(redirectSupportedProtocols, n.ProtocolVersion) {
		if n.Error != "" {
			return fmt.Errorf("%w: the server refused: %s", ErrProtocol, truncate(n.Error))
		}
		if n.IsRedirect() {
			return nil
		}
	}
	if n.ConnectionToken == "" || n.ConnectionID == "" || n.URL == "" {
		return fmt.Errorf("%w: the negotiate answer lacks Url, ConnectionToken or ConnectionId", ErrProtocol)
	}
	return nil
}

// AppendNegotiate appends an offer as PersistentConnection writes it:
// members in its order, seconds as Json.NET writes a double (20.0), a
// KeepAliveTimeout of nil as null.
func AppendNegotiate(dst []byte, n *Negotiate) []byte {
	dst = append(dst, `{"Url":`...)
	dst = jsonscan.AppendQuotedString(dst, n.URL)
	dst = append(dst, `,"ConnectionToken":`...)
	dst = jsonscan.AppendQuotedString(dst, n.ConnectionToken)
	dst = append(dst, `,"ConnectionId":`...)
	dst = jsonscan.AppendQuotedString(dst, n.ConnectionID)
	dst = append(dst, `,"KeepAliveTimeout":`...)
	if n.KeepAliveTimeout == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendSeconds(dst, *n.KeepAliveTimeout)
	}
	dst = appendSecondsMember(dst, "DisconnectTimeout", n.DisconnectTimeout)
	dst = appendSecondsMember(dst, "ConnectionTimeout", n.ConnectionTimeout)
	dst = append(dst, `,"TryWebSockets":`...)
	dst = strconv.AppendBool(dst, n.TryWebSockets)
	dst = append(dst, `,"ProtocolVersion":`...)
	dst = jsonscan.AppendQuotedString(dst, n.ProtocolVersion)
	dst = appendSecondsMember(dst, "TransportConnectTimeout", n.TransportConnectTimeout)
	dst = appendSecondsMember(dst, "LongPollDelay", n.LongPollDelay)
	return append(dst, '}')
}

// AppendRedirect appends Azure SignalR Service's ASP.NET-mode negotiate
// answer, as the app server's NegotiateMiddleware writes it: version 2.0,
// the service's client URL, the client's token, and TryWebSockets (which
// the .NET client needs).
func AppendRedirect(dst []byte, redirectURL, accessToken string) []byte {
	dst = append(dst, `{"ProtocolVersion":`...)
	dst = jsonscan.AppendQuotedString(dst, ServerProtocol)
	dst = append(dst, `,"RedirectUrl":`...)
	dst = jsonscan.AppendQuotedString(dst, redirectURL)
	dst = append(dst, `,"AccessToken":`...)
	dst = jsonscan.AppendQuotedString(dst, accessToken)
	return append(dst, `,"TryWebSockets":true}`...)
}

func appendSecondsMember(dst []byte, name string, seconds float64) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendSeconds(dst, seconds)
}

// appendSeconds writes a double as Json.NET does for the plain decimals
// negotiate carries: the shortest text that reads back, with ".0" when it
// has no fraction.
func appendSeconds(dst []byte, seconds float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, seconds, 'f', -1, 64)
	if bytes.IndexByte(dst[start:], '.') < 0 {
		dst = append(dst, '.', '0')
	}
	return dst
}
