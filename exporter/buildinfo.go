package exporter

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfo labels hubprobe_build_info.
type BuildInfo struct {
	Version   string
	Revision  string
	GoVersion string
}

// ReadBuildInfo takes the version and VCS revision the Go toolchain embedded
// in the binary; what it cannot find reads "unknown".
func ReadBuildInfo() BuildInfo {
	b := BuildInfo{Version: "unknown", Revision: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			b.Revision = s.Value
		}
	}
	return b
}

// String is the version line: "hubprobe VERSION (revision REV, GOVERSION)".
func (b BuildInfo) String() string {
	return "hubprobe " + orUnknown(b.Version) + " (revision " + orUnknown(b.Revision) + ", " + b.GoVersion + ")"
}

func newBuildInfoGauge(b BuildInfo) prometheus.Gauge {
	if b.GoVersion == "" {
		b.GoVersion = runtime.Version()
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "build_info",
		Help:      "Version, revision and Go version hubprobe was built with; always 1.",
		ConstLabels: prometheus.Labels{
			"version": orUnknown(b.Version), "revision": orUnknown(b.Revision), "goversion": b.GoVersion,
		},
	})
	g.Set(1)
	return g
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
