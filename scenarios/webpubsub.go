package scenarios

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/webpubsubclient"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// WebPubSub is how a run reaches an Azure Web PubSub hub, or the embedded
// hub's emulation of one: the connection string gives the client URL, the
// key the client and REST tokens are minted with, and the REST endpoint.
type WebPubSub struct {
	ConnectionString azure.ConnectionString
	// Credential signs in with Microsoft Entra ID when the connection
	// string names an AuthType; nil with an access key.
	Credential azcore.TokenCredential
	// Hub is the hub name on the service.
	Hub string
}

// webPubSubRoles let every client join the run's groups and send to them
// through the subprotocol; events need no role.
var webPubSubRoles = []string{azure.WebPubSubRoleJoinLeaveGroup, azure.WebPubSubRoleSendToGroup}

// webPubSubDialer opens Web PubSub clients, each as its own user (as in
// serverless mode, so a REST send to a user reaches one connection) with a
// token hubprobe mints from the access key, or the service generates for
// an Entra sign-in. Every message a client gets, from a group or from
// the server, is a delivery to it.
func (rn *Runner) webPubSubDialer(run *Run) (dialFunc, error) {
	w := rn.Endpoint.WebPubSub
	url, err := w.ConnectionString.WebPubSubClientURL(w.Hub)
	if err != nil {
		return nil, err
	}
	base := webpubsubclient.Options{
		URL:      url,
		Protocol: rn.Scenario.Protocol,
		Headers:  rn.Endpoint.Headers,
		Settings: clientconn.Settings{
			HandshakeTimeout: rn.Scenario.ConnectTimeout,
			WriteTimeout:     rn.stallWait(),
		},
	}
	rest, err := run.webPubSubREST()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, i int) (*Client, error) {
		token, err := rest.ClientToken(ctx, run.UserID(i), webPubSubRoles, 0)
		if err != nil {
			return nil, fmt.Errorf("web pubsub client token: %w", err)
		}
		opts := base
		opts.AccessToken, opts.Observer = token, observer{t: run.tracker, conn: i}
		deliver := func(m webpubsubclient.Message) { run.Delivered(i, m.Data) }
		opts.OnGroupMessage, opts.OnServerMessage = deliver, deliver
		conn, err := webpubsubclient.Dial(ctx, opts)
		if err != nil {
			return nil, err
		}
		return &Client{PubSub: conn, ID: conn.ConnectionID()}, nil
	}, nil
}

// webPubSubREST returns a REST client for the run's Web PubSub hub whose
// every response counts in the run's HTTP metrics under endpoint "rest".
// As for SignalR, a send is never retried: the target's Pause waits out
// a 429 instead of the pacer.
func (r *Run) webPubSubREST() (*azure.WebPubSubRESTClient, error) {
	w := r.endpoint.WebPubSub
	return azure.NewWebPubSubRESTClient(w.ConnectionString, w.Hub, azure.RESTOptions{
		Credential: w.Credential,
		Observer:   restObserver(r.tracker),
		MaxRetries: -1,
	})
}

// payloadType is how every Web PubSub kind sends its payloads: as JSON,
// which receivers get back as the same JSON text.
const payloadType = webpubsub.DataTypeJSON

// EventHandlerKeys lists the hub of every job's Web PubSub target with its
// access key: what hubprobe's event handler checks ce-signature against.
// Targets sharing a hub name each add their key.
func EventHandlerKeys(jobs []Job) map[string][]string {
	keys := map[string][]string{}
	for _, j := range jobs {
		if w := j.Runner.Endpoint.WebPubSub; w != nil {
			keys[w.Hub] = append(keys[w.Hub], string(w.ConnectionString.AccessKey()))
		}
	}
	return keys
}
