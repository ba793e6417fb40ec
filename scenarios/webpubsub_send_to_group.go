package scenarios

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/config"
)

// webPubSubSendToGroup is send_to_group on a Web PubSub target: the clients
// join groups of group_size through the subprotocol (joinGroup, waiting
// for each ack), and each sender sends sendToGroup to its own group, which
// the service delivers to every member, the sender too. Groups are laid
// out as on SignalR, so the guide's small-group (10) and big-group
// (connections/10) profiles give the same fan-out.
type webPubSubSendToGroup struct {
	groupLayout
	names []string // names[client]: the name of the client's group
}

func newWebPubSubSendToGroup(cfg config.Scenario) Kind {
	return &webPubSubSendToGroup{groupLayout: newGroupLayout(cfg)}
}

func (k *webPubSubSendToGroup) Prepare(ctx context.Context, r *Run) error {
	if err := k.joinGroups(ctx, r, joinThroughSubprotocol); err != nil {
		return err
	}
	k.names = groupNames(&k.groupLayout, r)
	return nil
}

// joinThroughSubprotocol joins with the client's own joinGroup frame.
func joinThroughSubprotocol(ctx context.Context, c *Client, group string) error {
	if err := c.PubSub.JoinGroup(ctx, group); err != nil {
		return fmt.Errorf("joinGroup: %w", err)
	}
	return nil
}

func (k *webPubSubSendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return k.reach(sender), r.Clients[sender].PubSub.SendToGroup(ctx, k.names[sender], payloadType, payload, 0)
}
