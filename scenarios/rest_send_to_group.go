package scenarios

import (
	"context"
	"encoding/json"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
)

// restSendToGroup: the probe puts the clients into groups of group_size
// through the REST API, then each send is a REST send of RecordLatency(p)
// to the sender slot's group, delivered to every member. Groups are laid
// out as in send_to_group.
type restSendToGroup struct {
	groups sendToGroup
	rest   *azure.RESTClient
}

func newRESTSendToGroup(cfg config.Scenario) Kind {
	return &restSendToGroup{groups: sendToGroup{size: max(cfg.GroupSize, 1)}}
}

func (k *restSendToGroup) Prepare(ctx context.Context, r *Run) (err error) {
	if k.rest, err = r.restClient(); err != nil {
		return err
	}
	g := &k.groups
	g.members = make([]int, (len(r.Clients)+g.size-1)/g.size)
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(r.Config.ConnectConcurrency, 1))
	for i, c := range r.Clients {
		g.members[g.group(i)]++
		name := g.groupName(r, g.group(i))
		eg.Go(func() error {
			if err := k.rest.AddConnectionToGroup(ctx, name, c.ID); err != nil {
				return fmt.Errorf("connection %d: add to group: %w", i, err)
			}
			return nil
		})
	}
	return eg.Wait()
}

func (k *restSendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	g := &k.groups
	if err := k.rest.SendToGroup(ctx, g.groupName(r, g.group(sender)), restTarget, []json.RawMessage{payload}); err != nil {
		return 0, err
	}
	r.restSent(payload)
	return g.members[g.group(sender)], nil
}
