// Package scenarios runs hubprobe's benchmark scenarios: it connects the
// clients, sets up routes (groups, target connections), paces sends
// open-loop, accounts for every expected delivery and reports through a
// Recorder. Each kind lives in its own file and registers in kinds below.
// A run paces one sending window; the capacity search (package capacity)
// drives the same connections through a Session, and package schedule
// decides when either happens.
package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hubprobe/hubprobe/config"
)

// Kind is one scenario: what the connected clients need before sending, and
// what a single send does.
type Kind interface {
	// Prepare runs once every client is connected, before pacing starts.
	Prepare(ctx context.Context, r *Run) error
	// Send sends one payload from the given sender and returns how many
	// deliveries it expects across the run's clients.
	Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (expected int, err error)
}

// kindFactory builds a Kind for one run of a scenario.
type kindFactory func(cfg config.Scenario) Kind

// kinds is the one registry of scenario kinds, each with its form on every
// service whose wire it runs on; config validation reads it through Kinds,
// so a kind cannot be valid in one place and not the other. The kinds keep
// the benchmark's names: the target's service picks the wire.
var kinds = map[string]map[string]kindFactory{
	"echo":           {signalR: newEcho, aspNetSignalR: newEcho, webPubSub: newUpstreamEcho},
	"broadcast":      {signalR: newBroadcast, aspNetSignalR: newBroadcast},
	"send_to_client": {signalR: newSendToClient, aspNetSignalR: newSendToClient},
	"send_to_group":  {signalR: newSendToGroup, aspNetSignalR: newSendToGroup, webPubSub: newWebPubSubSendToGroup},
	"streaming_echo": {signalR: newStreamingEcho},
	"server_push":    {signalR: newServerPush},

	// The rest_* kinds send through the service's REST API; the clients
	// only listen (on SignalR, connected in serverless mode).
	"rest_broadcast":          {signalR: newRESTBroadcast, webPubSub: newRESTBroadcast},
	"rest_send_to_user":       {signalR: newRESTSendToUser, webPubSub: newRESTSendToUser},
	"rest_send_to_group":      {signalR: newRESTSendToGroup, webPubSub: newRESTSendToGroup},
	"rest_send_to_connection": {webPubSub: newRESTSendToConnection},
}

const (
	signalR       = config.ServiceSignalR
	webPubSub     = config.ServiceWebPubSub
	aspNetSignalR = config.ServiceAspNetSignalR
)

// Kinds lists the registered kinds and the services each runs on.
func Kinds() config.Kinds {
	out := make(config.Kinds, len(kinds))
	for name, forms := range kinds {
		out[name] = slices.Sorted(maps.Keys(forms))
	}
	return out
}

// kindFactory returns the form of the scenario's kind on the endpoint's
// service.
func (rn *Runner) kindFactory() (kindFactory, error) {
	service := rn.Endpoint.service()
	factory, ok := kinds[rn.Scenario.Kind][service]
	if !ok {
		return nil, fmt.Errorf("scenario kind %q does not run on a %s target", rn.Scenario.Kind, service)
	}
	return factory, nil
}
