package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/hubprobe/hubprobe/config"
)

// sendToGroup: clients are split into groups of group_size (the benchmark's
// small-group profile is 10 members; its big-group profile uses a few large
// groups); each sender calls SendToGroup(p) for its own group and the hub
// delivers RecordLatency(p) to every member.
type sendToGroup struct{ groupLayout }

func newSendToGroup(cfg config.Scenario) Kind { return &sendToGroup{newGroupLayout(cfg)} }

// groupLayout is how both group kinds (send_to_group, rest_send_to_group)
// put clients into groups of group_size, so their groups and delivery
// counts are the same.
type groupLayout struct {
	size    int
	members []int // members[g] is the number of clients in group g
}

func newGroupLayout(cfg config.Scenario) groupLayout { return groupLayout{size: max(cfg.GroupSize, 1)} }

// group is the index of client's group: clients fill the groups in order.
func (g *groupLayout) group(client int) int { return client / g.size }

// groupName names client's group, unique to the run, so runs sharing a hub
// never meet in a group.
func (g *groupLayout) groupName(r *Run, client int) string {
	return "hubprobe-" + r.ID + "-" + strconv.Itoa(g.group(client))
}

// reach is the number of deliveries one send to client's group expects.
func (g *groupLayout) reach(client int) int { return g.members[g.group(client)] }

// joinFunc puts one client into the named group.
type joinFunc func(ctx context.Context, c *Client, group string) error

// joinGroups lays the run's clients out in groups, counts each group's
// members and puts every client into its group with join, at most
// connect_concurrency at a time.
func (g *groupLayout) joinGroups(ctx context.Context, r *Run, join joinFunc) error {
	g.members = make([]int, (len(r.Clients)+g.size-1)/g.size)
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(r.Config.ConnectConcurrency, 1))
	for i, c := range r.Clients {
		g.members[g.group(i)]++
		name := g.groupName(r, i)
		eg.Go(func() error {
			if err := join(ctx, c, name); err != nil {
				return fmt.Errorf("connection %d: %w", i, err)
			}
			return nil
		})
	}
	return eg.Wait()
}

func (g *sendToGroup) Prepare(ctx context.Context, r *Run) error {
	if err := g.joinGroups(ctx, r, invokeJoinGroup); err != nil {
		return err
	}
	for sender := range r.Senders() {
		r.SetRoute(sender, keyGroupName, g.groupName(r, sender))
	}
	return nil
}

// invokeJoinGroup joins through the hub's own JoinGroup method.
func invokeJoinGroup(ctx context.Context, c *Client, group string) error {
	arg, _ := json.Marshal(group)
	if _, err := c.Conn.Invoke(ctx, "JoinGroup", arg); err != nil {
		return fmt.Errorf("JoinGroup: %w", err)
	}
	return nil
}

func (g *sendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return g.reach(sender), r.Clients[sender].Conn.Send(ctx, "SendToGroup", payload)
}
