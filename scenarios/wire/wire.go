// Package wire is the contract between the scenario engine and the wires
// it speaks: ASP.NET Core SignalR (corewire), classic ASP.NET SignalR
// (classicwire) and Azure Web PubSub (wpswire). A wire opens one run's
// connections and, where the service has one, its REST API; its
// connections offer the capabilities the kinds use (Echoer, GroupSender,
// and so on) and hand back every payload that arrives through a Receiver.
// The engine and the kinds know only this package; each wire knows its
// client, and none knows another. docs/architecture.md says what a new
// wire adds.
package wire

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Wire is a target resolved to one service's wire.
type Wire interface {
	// Spec is what the wire is and offers.
	Spec() Spec
	// Open prepares to dial the connections of one run.
	Open(run Run) (Dialer, error)
}

// Spec describes a wire: the service whose targets it reaches, what its
// connections and its service offer the kinds, and how it registers.
type Spec struct {
	// Service is one of config's Service* names.
	Service string
	// Offers are the capabilities of the wire's connections and its
	// service's REST API: the kinds that need no more run on it.
	Offers Capability
	// Registers is true when the hub tells a connection that it is
	// registered for broadcasts and groups after the handshake
	// (Receiver.Registered); a run waits for that before sending.
	Registers bool
	// ReconnectDelays are the waits of the wire's official client before
	// each attempt to connect again after a drop, the last one repeated
	// for as long as the attempts fail.
	ReconnectDelays []time.Duration
}

// Delay is the wait before reconnect attempt n (0 for the first).
func (s Spec) Delay(n int) time.Duration {
	if len(s.ReconnectDelays) == 0 {
		return 0
	}
	return s.ReconnectDelays[min(n, len(s.ReconnectDelays)-1)]
}

// SignalRReconnectDelays are @microsoft/signalr's for
// withAutomaticReconnect(): at once, then after 2, 10 and 30 s. That
// client gives up after the fourth; hubprobe keeps trying every 30 s.
var SignalRReconnectDelays = []time.Duration{0, 2 * time.Second, 10 * time.Second, 30 * time.Second}

// Run is what a wire needs to know of the run it dials for.
type Run struct {
	Scenario config.Scenario
	// WriteTimeout bounds every write, so a hub that stops reading
	// cannot block a sender for long.
	WriteTimeout time.Duration
	// RESTObserver sees every REST response and the bytes of every REST
	// send the service accepted.
	RESTObserver clientconn.Observer
}

// Dialer opens the connections of one run.
type Dialer interface {
	// Dial opens one connection for user (unique to the run and the
	// connection), which reports what arrives on it to rx.
	Dial(ctx context.Context, user string, rx Receiver) (Conn, error)
	// REST is the service's REST API, or an error saying why the target
	// has none.
	REST() (REST, error)
}

// Receiver is the run's side of one connection: what the connection
// hands back. A wire calls it from the connection's read goroutine.
type Receiver interface {
	// The connection's HTTP responses, connect timing, round trips and
	// bytes.
	clientconn.Observer
	// Deliver hands over a payload that arrived, which the receiver does
	// not keep; item is its index in a batch (server_push), -1 when the
	// message carries none.
	Deliver(payload json.RawMessage, item int)
	// Registered is the hub saying it registered the connection.
	Registered()
	// Reconnected is the connection back after its transport dropped.
	Reconnected()
}

// Conn is one open connection, whatever its wire. The kinds ask it for
// the capability they need.
type Conn interface {
	// ID is how the hub addresses the connection; empty when the connect
	// did not tell it (see IDAsker).
	ID() string
	// Done is closed once the connection has ended, Err says why (nil
	// while it is open or after Close).
	Done() <-chan struct{}
	Err() error
	Close(ctx context.Context) error
	// CheckAlive ends a connection whose hub does not answer a ping
	// within wait (over HTTP transports: a send, or a ping request).
	CheckAlive(ctx context.Context, wait time.Duration) error
	// Dropped is why the connection ended without the probe asking, one
	// of clientconn.DropReasons, and when; meaningful once Done is closed.
	Dropped() (reason string, at time.Time)
}

// Capability is a set of what a wire offers the kinds.
type Capability uint16

// The capabilities, each named by the interface that provides it.
const (
	// CanEcho: the connection's Conn is an Echoer.
	CanEcho Capability = 1 << iota
	// CanBroadcast: a Broadcaster.
	CanBroadcast
	// CanSendToConnection: a ConnectionSender.
	CanSendToConnection
	// CanGroups: a GroupSender.
	CanGroups
	// CanStream: a StreamEchoer.
	CanStream
	// CanServerPush: a ServerPusher.
	CanServerPush
	// CanREST: the service has a REST API (Dialer.REST) that sends to all,
	// users and groups.
	CanREST
	// CanRESTToConnection: that REST API also sends to a connection by
	// the id its connect gave (Conn.ID).
	CanRESTToConnection
)

// Echoer sends a payload that the hub answers to the sender alone.
type Echoer interface {
	Echo(ctx context.Context, payload json.RawMessage) error
}

// Broadcaster sends a payload that the hub delivers to every connection.
type Broadcaster interface {
	Broadcast(ctx context.Context, payload json.RawMessage) error
}

// ConnectionSender sends a payload that the hub delivers to the
// connection with the given id.
type ConnectionSender interface {
	SendToConnection(ctx context.Context, id string, payload json.RawMessage) error
}

// IDAsker asks the hub for the connection's id, for connections whose
// connect did not tell it.
type IDAsker interface {
	AskID(ctx context.Context) (string, error)
}

// GroupSender joins groups, and sends payloads the hub delivers to every
// member of a group.
type GroupSender interface {
	JoinGroup(ctx context.Context, group string) error
	SendToGroup(ctx context.Context, group string, payload json.RawMessage) error
}

// ServerPusher asks the hub to push count messages carrying payload
// (each with its index in the batch) back to the connection.
type ServerPusher interface {
	ServerPush(ctx context.Context, payload json.RawMessage, count int) error
}

// StreamEchoer opens a stream the hub echoes each item of, after delay;
// every item that comes back is delivered to the connection's Receiver.
// send sends the next item.
type StreamEchoer interface {
	StreamEcho(ctx context.Context, delay time.Duration) (send func(ctx context.Context, item json.RawMessage) error, err error)
}

// REST is a service's REST API as the rest_* kinds send through it.
// Every send the service accepted counts its bytes as sent, in the
// run's RESTObserver.
type REST interface {
	SendToAll(ctx context.Context, payload json.RawMessage) error
	SendToUser(ctx context.Context, user string, payload json.RawMessage) error
	SendToGroup(ctx context.Context, group string, payload json.RawMessage) error
	SendToConnection(ctx context.Context, id string, payload json.RawMessage) error
	AddToGroup(ctx context.Context, group, connectionID string) error
}

// Of reports the capabilities conn offers by its type, the REST ones
// aside: what a wire's Spec claims for its connections, its tests check
// against this.
func Of(conn Conn) Capability {
	var c Capability
	for _, has := range [...]struct {
		ok  bool
		cap Capability
	}{
		{is[Echoer](conn), CanEcho},
		{is[Broadcaster](conn), CanBroadcast},
		{is[ConnectionSender](conn), CanSendToConnection},
		{is[GroupSender](conn), CanGroups},
		{is[StreamEchoer](conn), CanStream},
		{is[ServerPusher](conn), CanServerPush},
	} {
		if has.ok {
			c |= has.cap
		}
	}
	return c
}

func is[T any](conn Conn) bool {
	_, ok := conn.(T)
	return ok
}
