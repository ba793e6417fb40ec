package scenarios

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
)

// restSendToGroup: the probe puts the clients into groups of group_size
// through the REST API, then each send is a REST send of RecordLatency(p)
// to the sender slot's group, delivered to every member. Groups are laid
// out as in send_to_group.
type restSendToGroup struct {
	groupLayout
	rest *azure.RESTClient
}

func newRESTSendToGroup(cfg config.Scenario) Kind {
	return &restSendToGroup{groupLayout: newGroupLayout(cfg)}
}

func (k *restSendToGroup) Prepare(ctx context.Context, r *Run) (err error) {
	if k.rest, err = r.restClient(); err != nil {
		return err
	}
	return k.joinGroups(ctx, r, k.addToGroup)
}

// addToGroup joins through the service's REST API, by connection id.
func (k *restSendToGroup) addToGroup(ctx context.Context, c *Client, group string) error {
	if err := k.rest.AddConnectionToGroup(ctx, group, c.ID); err != nil {
		return fmt.Errorf("add to group: %w", err)
	}
	return nil
}

func (k *restSendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToGroup(ctx, k.groupName(r, sender), restTarget, []json.RawMessage{payload}); err != nil {
		return 0, err
	}
	r.restSent(payload)
	return k.reach(sender), nil
}
