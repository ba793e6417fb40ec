package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/internal/clientconn"
	"github.com/hubprobe/hubprobe/probe"
)

// Serverless is how a run reaches Azure SignalR Service (or the embedded
// hub's emulation of it) in serverless mode.
type Serverless struct {
	ConnectionString azure.ConnectionString
	// Hub is the hub name on the service.
	Hub string
	// RESTAPIVersion is azure.RESTAPIV1 (the default) or azure.RESTAPI20220601.
	RESTAPIVersion string
}

// errNotServerless fails a REST kind whose target gives no connection string.
var errNotServerless = errors.New("this kind sends through the REST API and needs a target in serverless mode")

// UserID is the user client i connects as in serverless mode and on a Web
// PubSub target: unique to the run and, by the client's index among all
// shards' connections, to the shard, so a REST send to a user reaches that
// one connection.
func (r *Run) UserID(i int) string { return "hubprobe-" + r.ID + "-" + strconv.Itoa(r.global(i)) }

// dialSignalR opens SignalR client i. In serverless mode it carries a
// client token of its own, minted for its user id.
func (rn *Runner) dialSignalR(ctx context.Context, run *Run, opts probe.Options, i int) (*probe.Conn, error) {
	opts = withReceiver(opts, run, i)
	if s := rn.Endpoint.Serverless; s != nil {
		so, err := probe.ServerlessOptions(s.ConnectionString, s.Hub, run.UserID(i))
		if err != nil {
			return nil, fmt.Errorf("serverless client token: %w", err)
		}
		opts.URL, opts.AccessToken = so.URL, so.AccessToken
	}
	return probe.Dial(ctx, opts)
}

// restClient returns a REST client for the run's hub whose every response
// counts in the run's HTTP metrics under endpoint "rest".
func (r *Run) restClient() (*azure.RESTClient, error) {
	s := r.endpoint.Serverless
	if s == nil {
		return nil, errNotServerless
	}
	return azure.NewRESTClient(s.ConnectionString, s.Hub, azure.RESTOptions{
		APIVersion: s.RESTAPIVersion,
		Observer:   observer{r.tracker},
		// No retries inside a send: a retry would block the pacer and fire
		// the sends that fell due meanwhile in a burst. The target's Pause
		// waits out a 429 instead.
		MaxRetries: -1,
	})
}

// restTarget is the client method every REST send invokes.
const restTarget = "RecordLatency"

// refusedSends counts the sends the hub throttled, through its REST API
// (HTTP 429) or by closing a connection for throttling, and the sends that
// fell due while the target was paused. None of them is a sent message,
// and the sender goes on with its schedule; the run fails with the reason.
type refusedSends struct {
	n, paused int
	reason    string
	first     error
}

// throttledBy tells whether err, of a client connection or of a REST
// call, is the hub throttling the probe, and which throttle reason applies.
func throttledBy(err error) (reason string, throttled bool) {
	if reason, ok := azure.ClassifyRESTThrottle(err); ok {
		return reason, true
	}
	return clientconn.ClassifyThrottle(err)
}

// add reports whether err is a throttled send, counts it and pauses the
// target: for the service's Retry-After when it gave one.
func (s *refusedSends) add(run *Run, pause *Pause, err error) bool {
	if err == nil {
		pause.Accepted()
		return false
	}
	reason, ok := azure.ClassifyRESTThrottle(err)
	var retryAfter time.Duration
	if re := (*azure.RESTError)(nil); ok && errors.As(err, &re) {
		retryAfter = re.RetryAfter
	}
	if !ok {
		// A connection closed for throttling cannot send again; it is
		// counted when the drop is recorded. The target pauses all the same.
		if reason, closed := clientconn.ClassifyThrottle(err); closed {
			pause.Throttle(reason, 0, time.Now())
		}
		return false
	}
	pause.Throttle(reason, retryAfter, time.Now())
	run.Throttled(reason)
	if s.n == 0 {
		s.reason, s.first = reason, err
	}
	s.n++
	return true
}

// held reports whether the target is paused now, and counts a send that
// fell due meanwhile as throttled.
func (s *refusedSends) held(run *Run, pause *Pause, now time.Time) bool {
	reason, held := pause.Holding(now)
	if held {
		run.Throttled(reason)
		run.tracker.paused.Add(1)
		if s.paused++; s.reason == "" {
			s.reason = reason
		}
	}
	return held
}

// err is the run's failure when the hub throttled any of its sends: a run
// whose sends all fell inside a pause the target's earlier throttling left
// measured nothing, and is not a success either.
func (s *refusedSends) err() error {
	if s.n == 0 && s.paused == 0 {
		return nil
	}
	if s.n == 0 {
		return fmt.Errorf("throttled (%s): %d sends fell due while the target was paused after throttling", s.reason, s.paused)
	}
	return fmt.Errorf("throttled (%s): the hub refused %d sends, %d more fell due while paused: %w", s.reason, s.n, s.paused, s.first)
}
