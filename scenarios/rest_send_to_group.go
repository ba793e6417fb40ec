package scenarios

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// restSendToGroup: the probe puts the clients into groups of group_size
// through the REST API (by connection id), then each send is a REST send
// of the payload to the sender slot's group, delivered to every member.
// Groups are laid out as in send_to_group.
type restSendToGroup struct {
	groupLayout
	rest  wire.REST
	names []string // names[sender]: its group
}

func newRESTSendToGroup(cfg config.Scenario) Kind {
	return &restSendToGroup{groupLayout: newGroupLayout(cfg)}
}

func (k *restSendToGroup) Prepare(ctx context.Context, r *Run) (err error) {
	if k.rest, err = r.REST(); err != nil {
		return err
	}
	addToGroup := func(ctx context.Context, i int, group string) error { return k.addToGroup(ctx, r.Clients[i].ID, group) }
	if err := k.joinGroups(ctx, r, addToGroup); err != nil {
		return err
	}
	k.names = groupNames(&k.groupLayout, r)
	return nil
}

// addToGroup joins through the service's REST API, by connection id.
func (k *restSendToGroup) addToGroup(ctx context.Context, id, group string) error {
	if err := k.rest.AddToGroup(ctx, group, id); err != nil {
		return fmt.Errorf("add to group: %w", err)
	}
	return nil
}

func (k *restSendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToGroup(ctx, k.names[sender], payload); err != nil {
		return 0, err
	}
	return k.reach(sender), nil
}
