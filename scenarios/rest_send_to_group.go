package scenarios

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/config"
)

// restSendToGroup: the probe puts the clients into groups of group_size
// through the REST API (by connection id), then each send is a REST send
// of the payload to the sender slot's group, delivered to every member.
// Groups are laid out as in send_to_group.
type restSendToGroup struct {
	groupLayout
	rest  restAPI
	names []string // names[sender]: its group
}

func newRESTSendToGroup(cfg config.Scenario) Kind {
	return &restSendToGroup{groupLayout: newGroupLayout(cfg)}
}

func (k *restSendToGroup) Prepare(ctx context.Context, r *Run) (err error) {
	if k.rest, err = r.restAPI(); err != nil {
		return err
	}
	if err := k.joinGroups(ctx, r, k.addToGroup); err != nil {
		return err
	}
	k.names = groupNames(&k.groupLayout, r)
	return nil
}

// addToGroup joins through the service's REST API, by connection id.
func (k *restSendToGroup) addToGroup(ctx context.Context, c *Client, group string) error {
	if err := k.rest.addToGroup(ctx, group, c.ID); err != nil {
		return fmt.Errorf("add to group: %w", err)
	}
	return nil
}

func (k *restSendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.sendToGroup(ctx, k.names[sender], payload); err != nil {
		return 0, err
	}
	return k.reach(sender), nil
}
