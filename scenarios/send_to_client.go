package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/hubprobe/hubprobe/config"
)

// sendToClient: each sender calls SendToClient(p) with a target connection
// id in the payload (on a classic hub SendToConnection(id, ticks, p)); the
// hub delivers RecordLatency(p) to that connection only. Targets are a shuffle of the run's clients, as in the benchmark.
type sendToClient struct{}

func newSendToClient(config.Scenario) Kind { return sendToClient{} }

func (sendToClient) Prepare(ctx context.Context, r *Run) error {
	for i, c := range r.Clients {
		if c.ID != "" {
			continue
		}
		// Without negotiate (or with a hub that does not return it) the id
		// comes from the hub itself.
		id, err := c.hub.connectionID(ctx)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		c.ID = id
	}
	targets := rand.Perm(len(r.Clients))
	for sender := range r.Senders() {
		r.SetRoute(sender, keyConnectionID, r.Clients[targets[sender]].ID)
	}
	return nil
}

func (sendToClient) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, r.Clients[sender].hub.sendToConnection(ctx, r.routes[sender].value, payload)
}
