// Package scenarios runs hubprobe's benchmark scenarios: it connects the
// clients, sets up routes (groups, target connections), paces sends
// open-loop, accounts for every expected delivery and reports through a
// Recorder. Each kind lives in its own file and registers in kinds below.
package scenarios

import (
	"context"
	"encoding/json"
	"sort"

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

// kinds is the one registry of scenario kinds; config validation reads its
// keys through Kinds, so a kind cannot be valid in one place and not the other.
var kinds = map[string]kindFactory{
	"echo":           newEcho,
	"broadcast":      newBroadcast,
	"send_to_client": newSendToClient,
	"send_to_group":  newSendToGroup,
	"streaming_echo": newStreamingEcho,
	"server_push":    newServerPush,

	// The rest_* kinds send through Azure SignalR Service's REST API; the
	// clients only listen, connected in serverless mode.
	"rest_broadcast":     newRESTBroadcast,
	"rest_send_to_user":  newRESTSendToUser,
	"rest_send_to_group": newRESTSendToGroup,
}

// Kinds lists the registered kind names, sorted.
func Kinds() []string {
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
