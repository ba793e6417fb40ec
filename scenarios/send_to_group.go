package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// sendToGroup: clients are split into groups of group_size (the benchmark's
// small-group profile is 10 members; its big-group profile uses a few large
// groups) and join them through their own connection; each sender sends
// to its own group (SendToGroup(p) with the group in the payload, on a
// classic hub GroupBroadcast, on Web PubSub the subprotocol's
// sendToGroup) and the hub delivers it to every member, the sender too.
type sendToGroup struct {
	groupLayout
	conns []wire.GroupSender
	names []string // names[client]: the name of the client's group
}

func newSendToGroup(cfg config.Scenario) Kind { return &sendToGroup{groupLayout: newGroupLayout(cfg)} }

// groupLayout is how both group kinds (send_to_group, rest_send_to_group)
// put clients into groups of group_size, so their groups and delivery
// counts are the same. Groups are laid out over all the scenario's
// connections, whichever shard holds them, so a group may span shards;
// each shard expects a send to reach only its own members of the group.
type groupLayout struct {
	size    int
	first   int   // the run's Run.first
	members []int // members[g-first/size]: this shard's clients in group g
}

func newGroupLayout(cfg config.Scenario) groupLayout { return groupLayout{size: max(cfg.GroupSize, 1)} }

// group is the index of client's group: clients fill the groups in order.
func (g *groupLayout) group(client int) int { return (g.first + client) / g.size }

// slot is where client's group is in members.
func (g *groupLayout) slot(client int) int { return g.group(client) - g.first/g.size }

// groupName names client's group, unique to the run, so runs sharing a hub
// never meet in a group, while the shards of one run do.
func (g *groupLayout) groupName(r *Run, client int) string {
	return "hubprobe-" + r.ID + "-" + strconv.Itoa(g.group(client))
}

// reach is the number of deliveries one send to client's group expects:
// the group's members on this shard.
func (g *groupLayout) reach(client int) int { return g.members[g.slot(client)] }

// groupNames names every client's group once, so a send builds no string.
func groupNames(g *groupLayout, r *Run) []string {
	names := make([]string, len(r.Clients))
	for i := range names {
		names[i] = g.groupName(r, i)
	}
	return names
}

// joinFunc puts client i into the named group.
type joinFunc func(ctx context.Context, i int, group string) error

// joinGroups lays the run's clients out in groups, counts each group's
// members and puts every client into its group with join, at most
// connect_concurrency at a time.
func (g *groupLayout) joinGroups(ctx context.Context, r *Run, join joinFunc) error {
	g.first, g.members = r.first, nil
	if n := len(r.Clients); n > 0 {
		g.members = make([]int, g.slot(n-1)+1)
	}
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(r.Config.ConnectConcurrency, 1))
	for i := range r.Clients {
		g.members[g.slot(i)]++
		name := g.groupName(r, i)
		eg.Go(func() error {
			if err := join(ctx, i, name); err != nil {
				return fmt.Errorf("connection %d: %w", i, err)
			}
			return nil
		})
	}
	return eg.Wait()
}

func (k *sendToGroup) Prepare(ctx context.Context, r *Run) (err error) {
	if k.conns, err = capabilities[wire.GroupSender](r, len(r.Clients)); err != nil {
		return err
	}
	join := func(ctx context.Context, i int, group string) error {
		if err := k.conns[i].JoinGroup(ctx, group); err != nil {
			return fmt.Errorf("JoinGroup: %w", err)
		}
		return nil
	}
	if err := k.joinGroups(ctx, r, join); err != nil {
		return err
	}
	k.names = groupNames(&k.groupLayout, r)
	for sender := range r.Senders() {
		r.SetRoute(sender, keyGroupName, k.names[sender])
	}
	return nil
}

func (k *sendToGroup) Send(ctx context.Context, _ *Run, sender int, payload json.RawMessage) (int, error) {
	return k.reach(sender), k.conns[sender].SendToGroup(ctx, k.names[sender], payload)
}
