package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// sendToClient: each sender asks the hub to deliver its payload to one
// target connection (SendToClient(p) with the target's id in the payload,
// on a classic hub SendToConnection(id, ticks, p)). Targets are a shuffle
// of the run's clients, as in the benchmark.
type sendToClient struct{ conns []wire.ConnectionSender }

func newSendToClient(config.Scenario) Kind { return &sendToClient{} }

func (k *sendToClient) Prepare(ctx context.Context, r *Run) (err error) {
	if k.conns, err = capabilities[wire.ConnectionSender](r, r.Senders()); err != nil {
		return err
	}
	if err := askIDs(ctx, r); err != nil {
		return err
	}
	targets := rand.Perm(len(r.Clients))
	for sender := range r.Senders() {
		r.SetRoute(sender, keyConnectionID, r.Clients[targets[sender]].ID)
	}
	return nil
}

// askIDs asks the hub for the ids that the connects did not tell (no
// negotiate, or a hub that does not return it).
func askIDs(ctx context.Context, r *Run) error {
	for i, c := range r.Clients {
		if c.ID != "" {
			continue
		}
		asker, err := capability[wire.IDAsker](r, i)
		if err != nil {
			return err
		}
		if c.ID, err = asker.AskID(ctx); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
	}
	return nil
}

func (k *sendToClient) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, k.conns[sender].SendToConnection(ctx, r.routes[sender].value, payload)
}
