package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// Run is one run's connections, open and prepared, and what they measure:
// the one type the kinds, the single window (window.go) and the capacity
// search (package capacity) all work with. Runner.Open opens it, Finish
// closes it and says how it went.
type Run struct {
	Config  config.Scenario
	Clients []*Client
	// ID names this run's groups and users on a hub shared with other runs.
	// It derives from the scenario and the run's scheduled start, so the
	// shards of a sharded scenario share it and their groups span shards.
	ID string
	// shard is this process's part of the scenario; first is the index,
	// among the scenario's connections, of Clients[0].
	shard Shard
	first int

	rn          *Runner
	rec         Recorder
	kind        Kind
	dialer      wire.Dialer
	start       time.Time
	payloads    *payloadBuilder
	tracker     *tracker
	routes      []route
	onConnected atomic.Int64
	batchSize   int // messages per server_push batch; 0 for other kinds
}

// Client is one probe connection of a run.
type Client struct {
	Conn wire.Conn
	// ID is how the hub addresses this connection; kinds that route to a
	// connection fill it in Prepare when the connect did not.
	ID string
	// opened is when its connect completed.
	opened time.Time
}

type route struct{ key, value string }

// Senders is how many clients send, from the first one on: this shard's
// share of senders, or every client when senders is 0.
func (r *Run) Senders() int {
	if s := r.Config.Senders; s > 0 {
		return min(r.shard.Share(s), len(r.Clients))
	}
	return len(r.Clients)
}

// Connections is how many connections the run has open on this shard.
func (r *Run) Connections() int { return len(r.Clients) }

// Sent counts the run's messages the hub took so far.
func (r *Run) Sent() int64 { return r.tracker.sent.Load() }

// Expected counts the deliveries the run's sent messages expect so far.
func (r *Run) Expected() int64 { return r.tracker.expected.Load() }

// global is the index of client i among all the scenario's connections,
// whichever shard holds them.
func (r *Run) global(i int) int { return r.first + i }

// UserID is the user client i connects as where the wire needs one
// (serverless mode, Web PubSub): unique to the run and, by the client's
// index among all shards' connections, to the shard, so a REST send to a
// user reaches that one connection.
func (r *Run) UserID(i int) string { return "hubprobe-" + r.ID + "-" + strconv.Itoa(r.global(i)) }

// SetRoute makes every payload of sender carry key=value, which the hub uses
// to route it (a group name, a target connection id).
func (r *Run) SetRoute(sender int, key, value string) {
	r.routes[sender] = route{key, value}
}

// REST is the REST API of the run's target, which the kind that asks
// sends through; the run's hub time then accounts for it.
func (r *Run) REST() (wire.REST, error) {
	r.tracker.restSends.Store(true)
	return r.dialer.REST()
}

// Throttled records a throttle seen by a kind (for example a refused send).
func (r *Run) Throttled(reason string) { r.tracker.throttle(reason) }

// capability is client i's connection as the T a kind needs.
func capability[T any](r *Run, i int) (T, error) {
	c, ok := r.Clients[i].Conn.(T)
	if !ok {
		err := fmt.Errorf("connection %d on the %s wire is no %s", i, r.rn.Endpoint.Wire.Spec().Service, reflect.TypeFor[T]().Name())
		return c, err
	}
	return c, nil
}

// sendOne sends sender's next message, in buf, and counts it as sent when
// the hub took it; a message whose send failed is expected nowhere.
func (r *Run) sendOne(ctx context.Context, sender int, lag time.Duration, buf *[]byte) error {
	id := r.tracker.ids.Assign(sender)
	rt := r.routes[sender]
	*buf = r.payloads.Append((*buf)[:0], rt.key, rt.value, id)
	expected, err := r.kind.Send(ctx, r, sender, *buf)
	if err != nil {
		r.tracker.ids.Unsent(id)
		return err
	}
	r.tracker.sentMessage(expected, lag)
	return nil
}

// deliver records a payload that client receiver got, the item-th of a
// batch (item -1 outside batches). Payloads of other runs and of other
// shards are ignored, so a broadcast from a neighbouring scenario is never
// counted, and each shard counts only the deliveries of its own sends.
// A server_push batch ends with the arrival of its last item.
func (r *Run) deliver(receiver int, payload json.RawMessage, item int) {
	us, id, ok := r.payloads.Parse(payload)
	if !ok {
		return
	}
	_, seq := ledger.SplitMessageID(id)
	pos := uint64(seq)
	if r.batchSize > 0 {
		if item < 0 || item >= r.batchSize {
			return
		}
		pos = pos*uint64(r.batchSize) + uint64(item)
	}
	latency := sinceStamp(us)
	if r.tracker.delivered(receiver, id, pos, latency) && r.batchSize > 0 && item == r.batchSize-1 {
		r.tracker.batchDone(latency)
	}
}

// receiver is the run's side of client i's connection: its deliveries,
// round trips and bytes count against it.
type receiver struct {
	observer
	run *Run
}

func (rx receiver) Deliver(payload json.RawMessage, item int) { rx.run.deliver(rx.conn, payload, item) }
func (rx receiver) Registered()                               { rx.run.onConnected.Add(1) }
func (rx receiver) Reconnected()                              { rx.run.rec.Event(Event{Kind: Reconnected}) }

var _ wire.Receiver = receiver{}

// capabilities are the connections of clients 0 to n-1 as the T a kind
// needs, asked once as the kind prepares.
func capabilities[T any](r *Run, n int) ([]T, error) {
	out := make([]T, n)
	for i := range out {
		var err error
		if out[i], err = capability[T](r, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}
