package monitor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	armpolicy "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
	"github.com/rs/zerolog"
)

// DefaultInterval is how often a target's metrics are read, and their time
// grain: Azure Monitor's finest for these metrics.
const DefaultInterval = time.Minute

// Options say what one reader reads and how.
type Options struct {
	// Target is hubprobe's name for the service: the target label.
	Target   string
	Resource ResourceID
	// Endpoint is Resource Manager's; empty: DefaultEndpoint.
	Endpoint string
	// Interval is both how often the reader queries and the time grain
	// it asks for; 0: DefaultInterval. The configuration holds it to
	// Azure's grains; tests may go below.
	Interval time.Duration
	// Credential signs the requests in, through the SDK's bearer token
	// policy, for Endpoint's audience.
	Credential azcore.TokenCredential
	// Transport sends the requests to Resource Manager; nil: azcore's
	// default HTTP client.
	Transport policy.Transporter
	Logger    zerolog.Logger
	// Jitter draws the random share of a backoff, in [0, 1]; nil: uniform.
	Jitter func() float64
}

// Reader reads one target's metrics from Azure Monitor, one query per
// interval and never two at once, and keeps the latest value of each.
type Reader struct {
	opts   Options
	client *armmonitor.MetricsClient
	m      *Metrics
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	state state
}

// Start checks opts, registers the reader's series in m and starts reading
// at once; it reads until ctx ends or Stop.
func Start(ctx context.Context, opts Options, m *Metrics) (*Reader, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	client, err := armmonitor.NewMetricsClient(opts.Resource.Subscription, signInRecorder{opts.Credential}, clientOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("monitor: target %q: %w", opts.Target, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Reader{opts: opts, client: client, m: m, cancel: cancel, done: make(chan struct{}),
		state: state{started: time.Now(), metrics: metricsFor(opts.Resource.Service())}}
	m.start(opts.Target, r)
	go r.run(ctx)
	return r, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Credential == nil {
		return o, fmt.Errorf("monitor: target %q: no credential", o.Target)
	}
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	if err := CheckEndpoint(o.Endpoint); err != nil {
		return o, fmt.Errorf("monitor: target %q: endpoint %w", o.Target, err)
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	return o, nil
}

// clientOptions aims the client at the endpoint with its audience. The
// SDK's own retries are off: the reader decides when to ask again, so that
// a throttled service gets one request after its Retry-After and never a
// burst. It never registers resource providers: it only reads.
func clientOptions(o Options) *armpolicy.ClientOptions {
	return &armpolicy.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Cloud:     cloudFor(o.Endpoint),
			Transport: o.Transport,
			Retry:     policy.RetryOptions{MaxRetries: -1},
			Telemetry: policy.TelemetryOptions{ApplicationID: "hubprobe"},
		},
		DisableRPRegistration: true,
	}
}

// Stop ends the reading, waits for the read in flight, and takes the
// reader's values off the metrics. Its counters stay: a reload that
// replaces the reader keeps counting them.
func (r *Reader) Stop() {
	r.cancel()
	<-r.done
	r.m.usage.remove(r.opts.Target, r)
}

// Options returns the options the reader runs with, defaults filled in.
func (r *Reader) Options() Options { return r.opts }

// run reads, then waits for the time nextWait gives, until ctx ends.
func (r *Reader) run(ctx context.Context) {
	defer close(r.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	streak := 0 // failed reads in a row
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		a, f := r.read(ctx)
		if ctx.Err() != nil {
			return
		}
		r.record(a, f)
		var wait time.Duration
		wait, streak = r.nextWait(f, streak)
		timer.Reset(wait)
	}
}

// nextWait is the wait after a read: the interval after an answer (even one
// that lacked a metric, or named one the resource does not have, which the
// next query leaves out); after a refusal with Retry-After, that, when it
// is longer than the interval; after any other failure, a jittered backoff
// whose ceiling doubles with every failure in a row, from twice the
// interval up to backoffCapIntervals of them.
func (r *Reader) nextWait(f *failure, streak int) (time.Duration, int) {
	interval := r.opts.Interval
	if f == nil || f.reason == ReasonEmptySeries || f.reason == ReasonUnknownMetric {
		return interval, 0
	}
	streak++
	if f.retryAfter > 0 {
		return max(f.retryAfter, interval), streak
	}
	b := backoff(interval)
	return b.Wait(streak, r.opts.Jitter()), streak
}

// ServerLoad is the service's latest server load, 0 to 1, or NaN when no
// fresh value is known: what hubprobe_server_load_ratio reports.
func (r *Reader) ServerLoad() float64 {
	s := r.snapshot(time.Now())
	if v, ok := s.values[valueKey{usage: usageServerLoad}]; ok {
		return v
	}
	return math.NaN()
}
