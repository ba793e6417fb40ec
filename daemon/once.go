package daemon

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
	"github.com/hubprobe/hubprobe/scenarios/schedule"
)

// errStopped is a one-off run that ended before it could start.
var errStopped = errors.New("stopped before the scenario's start")

// Once is one scenario of a configuration made ready to run a single time,
// as `hubprobe run` does, on parts of its own.
type Once struct {
	opts  Options
	parts parts
	job   scenarios.Job
}

// NewOnce starts the embedded hubs and the event handler cfg needs and
// resolves the scenario; opts.ConfigFile and opts.Build are not used. The
// run records nothing but its report. Close it after.
func NewOnce(ctx context.Context, cfg *config.Config, sc config.Scenario, opts Options) (*Once, error) {
	p, err := startParts(ctx, opts, nil, nil)
	if err != nil {
		return nil, err
	}
	o := &Once{opts: opts, parts: p}
	if err := p.hubs.Sync(cfg); err != nil {
		o.Close()
		return nil, err
	}
	if o.job, err = p.resolver(opts, scenarios.Discarding).Job(cfg, sc); err != nil {
		o.Close()
		return nil, err
	}
	p.events.SetHubs(scenarios.EventHandlerKeys([]scenarios.Job{o.job}))
	return o, nil
}

// Run waits for the scenario's start (a shard: its next scheduled
// instant, when every shard starts), runs it and prints the report to w in
// format, a search's plot to plotFile when set.
func (o *Once) Run(ctx context.Context, w io.Writer, format, plotFile string) (runreport.Verdict, error) {
	at, ok := schedule.WaitForStart(ctx, o.job.Runner, o.opts.Logger)
	if !ok {
		return runreport.VerdictMissed, errStopped
	}
	return o.runAndReport(ctx, at, w, format, plotFile)
}

// runAndReport runs the scenario once from at within its timeout (a
// capacity_search scenario runs its search), prints the report to w in
// format, writes a search's plot to plotFile when set, and returns the
// verdict. The error is one of writing the report.
func (o *Once) runAndReport(ctx context.Context, at time.Time, w io.Writer, format, plotFile string) (runreport.Verdict, error) {
	rn := o.job.Runner
	ctx, cancel := context.WithDeadline(ctx, at.Add(rn.Scenario.Timeout))
	defer cancel()
	if rn.Scenario.Mode == config.ModeCapacitySearch {
		c := capacity.SearchAt(ctx, rn, o.opts.Search, at)
		return c.Verdict(), capacity.WriteReport(w, c, format, plotFile)
	}
	res := rn.RunAt(ctx, at)
	return runreport.RunVerdict(res, rn.Senders()), runreport.Write(w, res, rn.Scenario, format)
}

// Close stops the hubs and the event handler.
func (o *Once) Close() { o.parts.close() }
