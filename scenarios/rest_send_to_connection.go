package scenarios

import (
	"context"
	"encoding/json"
	"math/rand/v2"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// restSendToConnection: each send is a REST send of the payload to one
// connection, addressed by the id the service gave it, so one delivery. Sender slots address a shuffle of the run's connections, as
// send_to_client does.
type restSendToConnection struct {
	rest    wire.REST
	targets []string // targets[sender]: a connection id
}

func newRESTSendToConnection(config.Scenario) Kind { return &restSendToConnection{} }

func (k *restSendToConnection) Prepare(_ context.Context, r *Run) (err error) {
	if k.rest, err = r.REST(); err != nil {
		return err
	}
	order := rand.Perm(len(r.Clients))
	k.targets = make([]string, r.Senders())
	for sender := range k.targets {
		k.targets[sender] = r.Clients[order[sender]].ID
	}
	return nil
}

func (k *restSendToConnection) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToConnection(ctx, k.targets[sender], payload); err != nil {
		return 0, err
	}
	return 1, nil
}
