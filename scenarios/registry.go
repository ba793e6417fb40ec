// Package scenarios runs hubprobe's benchmark scenarios: it connects the
// clients over the target's wire (package wire), sets up routes (groups,
// target connections), paces sends open-loop, accounts for every expected
// delivery and reports through a Recorder. Each kind lives in its own file
// and registers in kinds below. A Run is one run's open connections:
// RunAt paces them through one sending window, the capacity search
// (package capacity) step after step, and package schedule decides when
// either happens.
package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
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

// kindSpec is a kind as registered: how to build it, and what it needs
// of a wire; it runs on every wire that offers that.
type kindSpec struct {
	build kindFactory
	needs wire.Capability
}

// kinds is the one registry of scenario kinds; config validation reads it
// through Kinds, so a kind cannot be valid in one place and not the
// other. The kinds keep the benchmark's names, and each speaks to its
// connections through the capability it needs: the target's wire does
// the rest, so a new wire (see wires) changes no kind.
var kinds = map[string]kindSpec{
	"echo":           {newEcho, wire.CanEcho},
	"broadcast":      {newBroadcast, wire.CanBroadcast},
	"send_to_client": {newSendToClient, wire.CanSendToConnection},
	"send_to_group":  {newSendToGroup, wire.CanGroups},
	"streaming_echo": {newStreamingEcho, wire.CanStream},
	"server_push":    {newServerPush, wire.CanServerPush},
	// held connections live as long as hubprobe does, each running the
	// echo's exchange (see Held); the scheduler holds them rather than
	// running them, and a single run of one is an echo run.
	config.KindHeld: {newEcho, wire.CanEcho},

	// The rest_* kinds send through the service's REST API; the clients
	// only listen (on SignalR, connected in serverless mode).
	"rest_broadcast":          {newRESTBroadcast, wire.CanREST},
	"rest_send_to_user":       {newRESTSendToUser, wire.CanREST},
	"rest_send_to_group":      {newRESTSendToGroup, wire.CanREST},
	"rest_send_to_connection": {newRESTSendToConnection, wire.CanREST | wire.CanRESTToConnection},
}

// runsOn reports whether a kind that needs needs runs on the wire spec.
func runsOn(needs wire.Capability, spec wire.Spec) bool { return spec.Offers&needs == needs }

// Kinds lists the registered kinds and the services each runs on.
func Kinds() config.Kinds {
	out := make(config.Kinds, len(kinds))
	for name, k := range kinds {
		var services []string
		for _, spec := range wires {
			if runsOn(k.needs, spec) {
				services = append(services, spec.Service)
			}
		}
		slices.Sort(services)
		out[name] = services
	}
	return out
}

// kindFactory returns the scenario's kind, when it runs on the endpoint's
// wire.
func (rn *Runner) kindFactory() (kindFactory, error) {
	spec := rn.Endpoint.Wire.Spec()
	k, ok := kinds[rn.Scenario.Kind]
	if !ok || !runsOn(k.needs, spec) {
		return nil, fmt.Errorf("scenario kind %q does not run on a %s target", rn.Scenario.Kind, spec.Service)
	}
	return k.build, nil
}
