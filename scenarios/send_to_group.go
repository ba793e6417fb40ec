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
type sendToGroup struct {
	size    int
	members []int // members[g] is the number of clients in group g
}

func newSendToGroup(cfg config.Scenario) Kind { return &sendToGroup{size: max(cfg.GroupSize, 1)} }

func (g *sendToGroup) group(client int) int { return client / g.size }

// groupName is unique to the run, so runs sharing a hub never meet in a group.
func (g *sendToGroup) groupName(r *Run, group int) string {
	return "hubprobe-" + r.ID + "-" + strconv.Itoa(group)
}

func (g *sendToGroup) Prepare(ctx context.Context, r *Run) error {
	g.members = make([]int, (len(r.Clients)+g.size-1)/g.size)
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(r.Config.ConnectConcurrency, 1))
	for i, c := range r.Clients {
		g.members[g.group(i)]++
		name := g.groupName(r, g.group(i))
		eg.Go(func() error {
			arg, _ := json.Marshal(name)
			if _, err := c.Conn.Invoke(ctx, "JoinGroup", arg); err != nil {
				return fmt.Errorf("connection %d: JoinGroup: %w", i, err)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	for sender := range r.Senders() {
		r.SetRoute(sender, keyGroupName, g.groupName(r, g.group(sender)))
	}
	return nil
}

func (g *sendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return g.members[g.group(sender)], r.Clients[sender].Conn.Send(ctx, "SendToGroup", payload)
}
