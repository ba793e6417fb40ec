package signalrclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// Transports Dial speaks, as Options.Transport names them.
const (
	TransportWebSockets  = "websockets"
	TransportSSE         = "sse"
	TransportLongPolling = "longpolling"
)

// transport carries hub protocol bytes between a Conn and the server. Conn
// calls nextFrame and setReadDeadline from one goroutine at a time (Dial,
// then the read goroutine), and writeFrame while holding its write turn.
// close and the reporting methods may be called from any goroutine.
type transport interface {
	// nextFrame waits for the next unit the server sent (a WebSocket
	// message, the data of one server-sent event, the body of one poll)
	// and returns its frame type and a reader of its bytes, valid until
	// the next call.
	nextFrame() (frameType int, r io.Reader, err error)
	// setReadDeadline bounds nextFrame and the reads of what it returned.
	// Passing the deadline fails them with an error clientconn.IsTimeout
	// recognises, and leaves the transport unusable.
	setReadDeadline(t time.Time) error
	// writeHandshake sends the handshake record before deadline and
	// returns once it is sent (for HTTP transports: once the server
	// answered its POST, a request traced with ctx's httptrace).
	writeHandshake(ctx context.Context, b []byte, deadline time.Time) error
	// writeFrame sends one or more framed records. WebSockets write them
	// before returning; HTTP transports queue them for the next POST and
	// end the connection through their fail function if that POST fails.
	writeFrame(b []byte) error
	// shutdown starts the client's orderly close: a close frame, or a
	// DELETE for long polling, after flushing queued sends. It may block
	// until deadline.
	shutdown(deadline time.Time)
	// goodbye runs once reading stopped for reason, to give the server an
	// orderly end where the protocol has one.
	goodbye(reason error)
	// close releases everything at once and unblocks any read or write.
	// It is idempotent.
	close()
	// name is one of the Transport* constants.
	name() string
}

// transportWireNames maps Options.Transport values to the names negotiate
// responses use.
var transportWireNames = map[string]string{
	TransportWebSockets:  "WebSockets",
	TransportSSE:         "ServerSentEvents",
	TransportLongPolling: "LongPolling",
}

// normalizeTransport accepts hubprobe's names and the negotiate names,
// case-insensitively; "" means WebSockets.
func normalizeTransport(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", TransportWebSockets, "websocket":
		return TransportWebSockets, nil
	case TransportSSE, "serversentevents":
		return TransportSSE, nil
	case TransportLongPolling, "long-polling":
		return TransportLongPolling, nil
	}
	return "", fmt.Errorf("probe: unknown transport %q (valid: websockets, sse, longpolling)", name)
}

// errBinaryOverSSE refuses MessagePack over server-sent events before any
// request is made: the event stream cannot carry its bytes.
var errBinaryOverSSE = errors.New("probe: messagepack needs a binary transport; server-sent events carry text only")

// transportCandidates lists Transport then FallbackTransports, normalised
// and without repeats, and refuses combinations that can never work.
func (o *Options) transportCandidates() ([]string, error) {
	names := append([]string{o.Transport}, o.FallbackTransports...)
	out := make([]string, 0, len(names))
	for _, raw := range names {
		name, err := normalizeTransport(raw)
		if err != nil {
			return nil, err
		}
		if name == TransportSSE && o.Protocol.TransferFormat() == signalr.BinaryFormat {
			return nil, errBinaryOverSSE
		}
		if name != TransportWebSockets && o.SkipNegotiation {
			return nil, fmt.Errorf("probe: transport %s needs negotiate for its connection token; SkipNegotiation works with websockets only", name)
		}
		if !containsString(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// chooseTransport returns the first candidate the server offers with
// format, or a negotiate clientconn.ConnectError saying why each one is unusable.
func chooseTransport(n *negotiation, candidates []string, format signalr.TransferFormat) (string, error) {
	reasons := make([]string, 0, len(candidates))
	for _, name := range candidates {
		reason := offerProblem(n.transports, transportWireNames[name], format)
		if reason == "" {
			return name, nil
		}
		reasons = append(reasons, reason)
	}
	return "", clientconn.NewConnectError(clientconn.PhaseNegotiate, fmt.Errorf("%s (it offers %s)",
		strings.Join(reasons, "; "), describeOffer(n.transports)))
}

// offerProblem is empty when the server offers wire with format.
func offerProblem(offered []signalr.AvailableTransport, wire string, format signalr.TransferFormat) string {
	for _, t := range offered {
		if !strings.EqualFold(t.Transport, wire) {
			continue
		}
		for _, f := range t.TransferFormats {
			if strings.EqualFold(string(f), string(format)) {
				return ""
			}
		}
		return fmt.Sprintf("server offers %s without the %s transfer format", wire, format)
	}
	return fmt.Sprintf("server does not offer the %s transport", wire)
}

func describeOffer(offered []signalr.AvailableTransport) string {
	if len(offered) == 0 {
		return "no transports"
	}
	parts := make([]string, 0, len(offered))
	for _, t := range offered {
		formats := make([]string, len(t.TransferFormats))
		for i, f := range t.TransferFormats {
			formats[i] = string(f)
		}
		parts = append(parts, t.Transport+"["+strings.Join(formats, ",")+"]")
	}
	return strings.Join(parts, ", ")
}

// transportTarget is where and how the chosen transport connects.
type transportTarget struct {
	name         string
	endpoint     *url.URL // http(s), the query kept, without id=
	token        string   // connection token, for id=; empty without negotiate
	accessToken  string
	connectionID string
}

// resolveTarget negotiates (unless SkipNegotiation) and picks the transport.
func resolveTarget(ctx context.Context, o *Options, endpoint *url.URL, clock *clientconn.PhaseClock) (*transportTarget, error) {
	candidates, err := o.transportCandidates()
	if err != nil {
		return nil, err
	}
	if o.SkipNegotiation {
		return &transportTarget{name: TransportWebSockets, endpoint: endpoint, accessToken: o.AccessToken}, nil
	}
	n, err := negotiate(ctx, o, endpoint, clock)
	if err != nil {
		return nil, err
	}
	name, err := chooseTransport(n, candidates, o.Protocol.TransferFormat())
	if err != nil {
		return nil, err
	}
	return &transportTarget{name: name, endpoint: n.endpoint, token: n.connectionToken,
		accessToken: n.accessToken, connectionID: n.connectionID}, nil
}

// openTransport connects the chosen transport, its requests traced with
// ctx's httptrace; failures are *clientconn.ConnectError.
func openTransport(ctx context.Context, o *Options, t *transportTarget) (transport, error) {
	switch t.name {
	case TransportSSE:
		return dialSSE(ctx, o, t)
	case TransportLongPolling:
		return dialLongPolling(ctx, o, t)
	}
	return dialWebSocket(ctx, o, webSocketURL(t.endpoint, t.token), t.accessToken)
}
