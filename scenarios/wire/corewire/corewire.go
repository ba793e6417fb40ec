// Package corewire is the scenario engine's ASP.NET Core SignalR wire:
// the benchmark hub's contract (BenchHub's methods, RecordLatency and
// OnConnected callbacks) over signalrclient, directly or through Azure
// SignalR Service's negotiate redirect, and Azure SignalR Service in
// serverless mode with its REST API.
package corewire

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/scenarios/wire"
	"github.com/hubprobe/hubprobe/signalr"
)

// Spec is the wire's: every hub-method kind, the REST kinds in serverless
// mode, and OnConnected before a connection sends.
var Spec = wire.Spec{
	Service: config.ServiceSignalR,
	Offers: wire.CanEcho | wire.CanBroadcast | wire.CanSendToConnection | wire.CanGroups |
		wire.CanStream | wire.CanServerPush | wire.CanREST,
	Registers: true,
	// A connection that drops reconnects as @microsoft/signalr does
	// with withAutomaticReconnect().
	ReconnectDelays: wire.SignalRReconnectDelays,
}

// Target is where and how the wire reaches a hub.
type Target struct {
	URL             string
	AccessToken     string
	Headers         http.Header
	SkipNegotiation bool
	// Serverless, when set, connects every client straight to Azure
	// SignalR Service's client endpoint with a token hubprobe mints, and
	// gives the REST kinds their REST client; URL and AccessToken are then
	// not used.
	Serverless *Serverless
}

// Wire is the wire to a Target.
type Wire struct{ Target Target }

// New is the wire to t.
func New(t Target) Wire { return Wire{t} }

// Spec is the package's Spec.
func (Wire) Spec() wire.Spec { return Spec }

// Open builds the run's client options once; every connection adds its
// own handlers.
func (w Wire) Open(run wire.Run) (wire.Dialer, error) {
	proto, err := signalr.ProtocolByName(run.Scenario.Protocol)
	if err != nil {
		return nil, err
	}
	d := &dialer{run: run, opts: signalrclient.Options{
		URL:                w.Target.URL,
		Transport:          run.Scenario.Transport,
		FallbackTransports: run.Scenario.FallbackTransports,
		Protocol:           proto,
		AccessToken:        w.Target.AccessToken,
		Headers:            w.Target.Headers,
		SkipNegotiation:    w.Target.SkipNegotiation,
		Settings:           clientconn.Settings{WriteTimeout: run.WriteTimeout},
	}}
	if s := w.Target.Serverless; s != nil {
		if d.serverless, err = s.open(run.RESTObserver); err != nil {
			return nil, err
		}
	}
	return d, nil
}

type dialer struct {
	run        wire.Run
	opts       signalrclient.Options
	serverless *serverlessRun // nil unless serverless
}

// Dial opens one connection whose callbacks report to rx.
func (d *dialer) Dial(ctx context.Context, user string, rx wire.Receiver) (wire.Conn, error) {
	opts := d.opts
	opts.Observer, opts.Handlers = rx, handlers(rx)
	if d.serverless != nil {
		var err error
		if opts.URL, opts.AccessToken, err = d.serverless.clientEndpoint(ctx, user); err != nil {
			return nil, err
		}
	}
	c, err := signalrclient.Dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	return conn{Conn: c, rx: rx}, nil
}

// REST is Azure SignalR Service's REST API, in serverless mode only.
func (d *dialer) REST() (wire.REST, error) {
	if d.serverless == nil {
		return nil, errNotServerless
	}
	return d.serverless.rest, nil
}

// quietCallbacks are callbacks the benchmark hub invokes that carry
// nothing to measure; they are registered so the client knows them.
var quietCallbacks = []string{"JoinGroup", "LeaveGroup", "ConnectionId"}

// handlers answers the benchmark hub's callbacks: RecordLatency(p) and,
// from ServerPush, RecordLatency(p, i) are deliveries; OnConnected says
// the connection is registered for broadcasts and groups, which can be
// after the handshake reply.
func handlers(rx wire.Receiver) map[string]signalrclient.Handler {
	h := make(map[string]signalrclient.Handler, len(quietCallbacks)+2)
	for _, name := range quietCallbacks {
		h[name] = func([]json.RawMessage) {}
	}
	h["OnConnected"] = func([]json.RawMessage) { rx.Registered() }
	h["RecordLatency"] = func(args []json.RawMessage) {
		if len(args) > 0 {
			rx.Deliver(args[0], batchIndex(args))
		}
	}
	return h
}
