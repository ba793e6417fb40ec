package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/azure"
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

// UserID is the user client i connects as in serverless mode: unique to the
// run, so a REST send to a user reaches that one connection.
func (r *Run) UserID(i int) string { return "hubprobe-" + r.ID + "-" + strconv.Itoa(i) }

// connectClient opens client i. In serverless mode it carries a client
// token of its own, minted for its user id.
func (rn *Runner) connectClient(ctx context.Context, run *Run, opts probe.Options, i int) (*probe.Conn, error) {
	opts = withReceiver(opts, run, i)
	if s := rn.Endpoint.Serverless; s != nil {
		so, err := probe.ServerlessOptions(s.ConnectionString, s.Hub, run.UserID(i))
		if err != nil {
			return nil, fmt.Errorf("serverless client token: %w", err)
		}
		opts.URL, opts.AccessToken = so.URL, so.AccessToken
	}
	return rn.connect(ctx, run, opts)
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
	})
}

// restTarget is the client method every REST send invokes.
const restTarget = "RecordLatency"

// restSent counts the bytes of a REST send the service accepted: the body
// {"target":"RecordLatency","arguments":[payload]}.
func (r *Run) restSent(payload []byte) {
	const overhead = len(`{"target":"` + restTarget + `","arguments":[]}`)
	observer{r.tracker}.BytesSent(overhead + len(payload))
}

// refusedSends counts the sends the hub throttled through its REST API
// (HTTP 429 after the client's retries). They are not sent messages, and
// the sender goes on with its schedule; the run fails with the reason.
type refusedSends struct {
	n      int
	reason string
	first  error
}

// add reports whether err is a throttled REST send, and counts it.
func (s *refusedSends) add(run *Run, err error) bool {
	reason, ok := azure.ClassifyRESTThrottle(err)
	if !ok {
		return false
	}
	run.Throttled(reason)
	if s.n == 0 {
		s.reason, s.first = reason, err
	}
	s.n++
	return true
}

func (s *refusedSends) err() error {
	if s.n == 0 {
		return nil
	}
	return fmt.Errorf("throttled (%s): the hub refused %d sends: %w", s.reason, s.n, s.first)
}
