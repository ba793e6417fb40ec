package scenarios

import (
	"context"
	"encoding/json"
	"math/rand/v2"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// restSendToUser: every client connects as its own user; each send is a
// REST send of the payload to one user, so one delivery. Sender slots
// address a shuffle of the users, as send_to_client does connections.
type restSendToUser struct {
	rest  wire.REST
	users []string // users[sender]
}

func newRESTSendToUser(config.Scenario) Kind { return &restSendToUser{} }

func (k *restSendToUser) Prepare(_ context.Context, r *Run) (err error) {
	if k.rest, err = r.REST(); err != nil {
		return err
	}
	k.users = shuffledUsers(r)
	return nil
}

// shuffledUsers gives every sender slot the user id of a client, a
// shuffle of the run's clients.
func shuffledUsers(r *Run) []string {
	targets := rand.Perm(len(r.Clients))
	users := make([]string, r.Senders())
	for sender := range users {
		users[sender] = r.UserID(targets[sender])
	}
	return users
}

func (k *restSendToUser) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToUser(ctx, k.users[sender], payload); err != nil {
		return 0, err
	}
	return 1, nil
}
