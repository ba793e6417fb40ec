package hub

import (
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// loadWindow is how far back Load looks; short enough to follow a benchmark
// step, long enough to smooth scheduling noise.
const loadWindow = 10 * time.Second

// Load is the server load of this process: CPU seconds used (user+system,
// from getrusage) over wall-clock seconds over the number of CPUs, across
// about the last ten seconds. 0.7 means 70 % of the machine. It measures the
// whole process: when the hub runs inside hubprobe, the probe's own CPU
// counts too. It is 0 where getrusage is unavailable.
func (h *Hub) Load() float64 { return h.load.load(time.Now()) }

// NewLoadCollector exports Load as hubprobe_server_load_ratio, for the
// standalone hub (inside hubprobe the exporter publishes it per target).
func NewLoadCollector(h *Hub, constLabels prometheus.Labels) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "hubprobe_server_load_ratio",
		Help:        "CPU time used by the hub process over wall time and CPU count, over the last 10s.",
		ConstLabels: constLabels,
	}, h.Load)
}

type cpuSample struct {
	wall time.Time
	cpu  time.Duration
}

// loadSampler keeps CPU samples about a second apart covering loadWindow.
type loadSampler struct {
	mu      sync.Mutex
	samples []cpuSample // oldest first
}

func newLoadSampler(now time.Time) *loadSampler {
	return &loadSampler{samples: []cpuSample{{wall: now, cpu: processCPU()}}}
}

func (s *loadSampler) record(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.samples[len(s.samples)-1].wall) < time.Second {
		return
	}
	s.samples = append(s.samples, cpuSample{wall: now, cpu: processCPU()})
	// Drop the oldest while the next one still covers the whole window.
	for len(s.samples) > 2 && now.Sub(s.samples[1].wall) >= loadWindow {
		s.samples = append(s.samples[:0], s.samples[1:]...)
	}
}

func (s *loadSampler) load(now time.Time) float64 {
	s.mu.Lock()
	oldest := s.samples[0]
	s.mu.Unlock()
	wall := now.Sub(oldest.wall)
	if wall <= 0 {
		return 0
	}
	used := processCPU() - oldest.cpu
	// Over very short spans (just after start) the kernel's CPU accounting
	// is coarse enough to overshoot; a ratio of the machine stays in [0, 1].
	return min(max(used.Seconds()/wall.Seconds()/float64(runtime.NumCPU()), 0), 1)
}
