package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
)

// upstreamEchoEvent is the custom event the upstream echo sends: the
// service posts it to the hub's event handler as azure.webpubsub.user.echo.
const upstreamEchoEvent = "echo"

// upstreamEcho is echo on a Web PubSub target, the guide's upstream echo:
// each sender sends its payload as the event "echo"; the service posts it
// to the hub's event handler as a CloudEvents request, the handler
// (hubprobe's own, or any that answers with the data it got) answers with
// the same data, and the service delivers the answer to the sender as a
// message from the server. One send is one delivery, and its latency
// holds the event handler's round trip.
type upstreamEcho struct{}

func newUpstreamEcho(config.Scenario) Kind { return upstreamEcho{} }

func (upstreamEcho) Prepare(context.Context, *Run) error { return nil }

func (upstreamEcho) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, r.Clients[sender].PubSub.SendEvent(ctx, upstreamEchoEvent, payloadType, payload, 0)
}
