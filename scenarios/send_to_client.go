package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/hubprobe/hubprobe/config"
)

// sendToClient: each sender calls SendToClient(p) with a target connection
// id in the payload; the hub delivers RecordLatency(p) to that connection
// only. Targets are a shuffle of the run's clients, as in the benchmark.
type sendToClient struct{}

func newSendToClient(config.Scenario) Kind { return sendToClient{} }

func (sendToClient) Prepare(ctx context.Context, r *Run) error {
	for i, c := range r.Clients {
		if c.ID != "" {
			continue
		}
		// Without negotiate (or with a hub that does not return it) the id
		// comes from the hub itself.
		raw, err := c.Conn.Invoke(ctx, "GetConnectionId")
		if err != nil {
			return fmt.Errorf("connection %d: GetConnectionId: %w", i, err)
		}
		if err := json.Unmarshal(raw, &c.ID); err != nil || c.ID == "" {
			return fmt.Errorf("connection %d: GetConnectionId returned no id", i)
		}
	}
	targets := rand.Perm(len(r.Clients))
	for sender := range r.Senders() {
		r.SetRoute(sender, keyConnectionID, r.Clients[targets[sender]].ID)
	}
	return nil
}

func (sendToClient) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, r.Clients[sender].Conn.Send(ctx, "SendToClient", payload)
}
