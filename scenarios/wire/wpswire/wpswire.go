// Package wpswire is the scenario engine's Azure Web PubSub wire: clients
// on either JSON subprotocol over webpubsubclient, each its own user with
// a client token, groups joined and sent to through the subprotocol, the
// upstream echo through the hub's event handler, and the data-plane REST
// API.
package wpswire

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/webpubsubclient"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// Spec is the wire's: the upstream echo, groups, and the REST API, which
// also sends to a connection by its id.
var Spec = wire.Spec{
	Service: config.ServiceWebPubSub,
	Offers:  wire.CanEcho | wire.CanGroups | wire.CanREST | wire.CanRESTToConnection,
	// @azure/web-pubsub-client's: a new connection at once, then one a
	// second for as long as they fail.
	ReconnectDelays: []time.Duration{0, time.Second},
}

// Target is how the wire reaches an Azure Web PubSub hub, or the embedded
// hub's emulation of one: the connection string gives the client URL,
// the key the client and REST tokens are minted with, and the REST
// endpoint.
type Target struct {
	ConnectionString azure.ConnectionString
	// Credential signs in with Microsoft Entra ID when the connection
	// string names an AuthType; nil with an access key.
	Credential azcore.TokenCredential
	// Hub is the hub name on the service.
	Hub     string
	Headers http.Header
}

// Wire is the wire to a Target.
type Wire struct{ Target Target }

// New is the wire to t.
func New(t Target) Wire { return Wire{t} }

// Spec is the package's Spec.
func (Wire) Spec() wire.Spec { return Spec }

// EventHandlerKey is the access key the service signs its requests to
// the hub's event handler with.
func (w Wire) EventHandlerKey() string { return string(w.Target.ConnectionString.AccessKey()) }

// roles let every client join the run's groups and send to them through
// the subprotocol; events need no role.
var roles = []string{azure.WebPubSubRoleJoinLeaveGroup, azure.WebPubSubRoleSendToGroup}

// Open builds the run's REST client, which also mints the clients'
// tokens: hubprobe's own from the access key, or the service's for an
// Entra sign-in.
func (w Wire) Open(run wire.Run) (wire.Dialer, error) {
	url, err := w.Target.ConnectionString.WebPubSubClientURL(w.Target.Hub)
	if err != nil {
		return nil, err
	}
	rest, err := azure.NewWebPubSubRESTClient(w.Target.ConnectionString, w.Target.Hub, azure.RESTOptions{
		Credential: w.Target.Credential,
		Observer:   run.RESTObserver,
		// As for SignalR, a send is never retried: the target's Pause
		// waits out a 429 instead of the pacer.
		MaxRetries: -1,
	})
	if err != nil {
		return nil, err
	}
	return &dialer{rest: restAPI{rest: rest, obs: run.RESTObserver}, opts: webpubsubclient.Options{
		URL:      url,
		Protocol: run.Scenario.Protocol,
		Headers:  w.Target.Headers,
		Settings: clientconn.Settings{
			HandshakeTimeout: run.Scenario.ConnectTimeout,
			WriteTimeout:     run.WriteTimeout,
		},
	}}, nil
}

type dialer struct {
	rest restAPI
	opts webpubsubclient.Options
}

func (d *dialer) REST() (wire.REST, error) { return d.rest, nil }

// Dial opens one connection as user (as in serverless mode, so a REST
// send to a user reaches one connection). Every message it gets, from a
// group or from the server, is a delivery to it.
func (d *dialer) Dial(ctx context.Context, user string, rx wire.Receiver) (wire.Conn, error) {
	token, err := d.rest.rest.ClientToken(ctx, user, roles, 0)
	if err != nil {
		return nil, fmt.Errorf("web pubsub client token: %w", err)
	}
	opts := d.opts
	opts.AccessToken, opts.Observer = token, rx
	deliver := func(m webpubsubclient.Message) { rx.Deliver(m.Data, -1) }
	opts.OnGroupMessage, opts.OnServerMessage = deliver, deliver
	c, err := webpubsubclient.Dial(ctx, opts)
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}
