package tiers

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// WorkloadError is a problem in a workload file. It is the configuration
// file's error type, rendering as "file:line: key: msg" so the message
// points at the offending spot.
type WorkloadError = yamldecode.Error

// LoadWorkload reads and validates the workload file at path.
func LoadWorkload(path string) (Workload, error) {
	data, err := yamldecode.ReadFile(path)
	if err != nil {
		return Workload{}, err
	}
	return ParseWorkload(data, path)
}

// PlanFile loads the workload file at path and sizes a tier for it. Every
// error names the file.
func PlanFile(path string) (Recommendation, error) {
	w, err := LoadWorkload(path)
	if err != nil {
		return Recommendation{}, err
	}
	rec, err := Plan(w)
	if err != nil { // LoadWorkload validated already; kept for safety
		return Recommendation{}, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// ParseWorkload decodes a workload strictly, as the configuration file is
// decoded (unknown or repeated keys and wrongly typed values are errors,
// merge keys work), and validates it; file names the source in errors.
// Every error is a *WorkloadError.
func ParseWorkload(data []byte, file string) (Workload, error) {
	d := yamldecode.New(file)
	var w Workload
	switch found, err := d.Decode(data, &w); {
	case err != nil:
		return Workload{}, err
	case !found:
		return Workload{}, d.ErrorAt(0, "", "the workload is empty")
	}
	svc, err := lookupService(w.Service)
	if err != nil {
		return Workload{}, d.Errorf("service", "%v", err)
	}
	if ferr := w.withDefaults().validate(svc); ferr != nil {
		return Workload{}, d.Errorf(ferr.Path, "%s", ferr.Msg)
	}
	return w, nil
}

// Size is a message size in bytes. A workload file may write it as an
// integer or with a unit, as ParseSize reads it.
type Size int64

// ParseScalar reads a size written with a unit, such as "2KiB".
func (s *Size) ParseScalar(text string) error {
	v, err := ParseSize(text)
	*s = Size(v)
	return err
}

// Expected describes the sizes ParseScalar accepts, for decoding errors.
func (*Size) Expected() string { return `a size such as 2048, "2KiB" or "20kB"` }

var sizePattern = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$`)

// sizeUnits: decimal kB/MB as the guides print them, binary KiB/MiB exact.
var sizeUnits = map[string]float64{
	"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "KiB": 1 << 10, "MiB": 1 << 20,
}

// ParseSize reads a message size: a number of bytes with an optional unit
// B, kB (or KB) = 1,000, MB = 1,000,000, KiB = 1,024 or MiB = 1,048,576.
func ParseSize(s string) (int64, error) {
	m := sizePattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	unit, ok := sizeUnits[m[2]]
	if !ok {
		return 0, fmt.Errorf("bad size %q: unknown unit %q", s, m[2])
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	bytes := v * unit
	if bytes != float64(int64(bytes)) || bytes < 1 {
		return 0, fmt.Errorf("bad size %q: not a whole number of bytes", s)
	}
	return int64(bytes), nil
}
