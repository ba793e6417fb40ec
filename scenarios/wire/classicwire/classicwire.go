// Package classicwire is the scenario engine's classic ASP.NET SignalR
// wire: the benchmark's Signalrbench hub (Echo, Broadcast,
// SendToConnection, GroupBroadcast, JoinGroup, and Measure back to the
// client) over aspnetclient, on an app server or Azure SignalR Service in
// ASP.NET mode behind one.
package classicwire

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// Spec is the wire's: the hub-method kinds a classic hub has.
var Spec = wire.Spec{
	Service: config.ServiceAspNetSignalR,
	Offers:  wire.CanEcho | wire.CanBroadcast | wire.CanSendToConnection | wire.CanGroups,
	// The connection mends a dropped transport itself, within the
	// server's disconnect timeout; one that ended anyway connects anew on
	// the ASP.NET Core client's schedule, as an app restarting it would.
	ReconnectDelays: wire.SignalRReconnectDelays,
}

// Target is where and how the wire reaches an app server.
type Target struct {
	URL         string
	AccessToken string
	Headers     http.Header
	// Hub is the hub every connection subscribes to.
	Hub string
}

// Wire is the wire to a Target.
type Wire struct{ Target Target }

// New is the wire to t.
func New(t Target) Wire { return Wire{t} }

// Spec is the package's Spec.
func (Wire) Spec() wire.Spec { return Spec }

// Open prepares to dial the connections of run.
func (w Wire) Open(run wire.Run) (wire.Dialer, error) {
	return dialer{opts: aspnetclient.Options{
		URL:                w.Target.URL,
		Hub:                w.Target.Hub,
		Transport:          run.Scenario.Transport,
		FallbackTransports: run.Scenario.FallbackTransports,
		AccessToken:        w.Target.AccessToken,
		Headers:            w.Target.Headers,
		Settings:           clientconn.Settings{WriteTimeout: run.WriteTimeout},
	}}, nil
}

type dialer struct{ opts aspnetclient.Options }

// errNoREST fails a REST kind on a classic target.
var errNoREST = errors.New("a classic ASP.NET SignalR target has no REST API")

func (dialer) REST() (wire.REST, error) { return nil, errNoREST }

// Dial opens one connection whose Measure calls and reconnects report to
// rx.
func (d dialer) Dial(ctx context.Context, _ string, rx wire.Receiver) (wire.Conn, error) {
	opts := d.opts
	opts.Observer, opts.OnReconnected = rx, rx.Reconnected
	opts.Handlers = map[string]aspnetclient.Handler{"Measure": measure(rx)}
	c, err := aspnetclient.Dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

// measure is the receiver's side of the hub's methods: Measure(ticks,
// payload) carries the payload as a JSON string, unquoted into a pooled
// buffer for the receiver, which keeps none of it.
func measure(rx wire.Receiver) aspnetclient.Handler {
	return func(args []json.RawMessage) {
		if len(args) < 2 {
			return
		}
		bp := clientconn.GetBuf()
		defer clientconn.PutBuf(bp)
		p, ok := appendStringValue((*bp)[:0], args[1])
		*bp = p
		if ok {
			rx.Deliver(p, -1)
		}
	}
}
