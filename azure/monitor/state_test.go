package monitor

import (
	"testing"
	"time"
)

// A value outlives its grain by expireIntervals intervals, then it is not
// reported any more; its age still is.
func TestValuesExpire(t *testing.T) {
	newest := time.Now().Add(-time.Minute)
	r := &Reader{opts: Options{Interval: time.Minute}, state: state{
		started: newest.Add(-time.Hour), newest: newest,
		values: map[valueKey]float64{{usage: usageServerLoad}: 0.8},
	}}
	if s := r.snapshot(newest.Add(expireIntervals * time.Minute)); s.values[valueKey{usage: usageServerLoad}] != 0.8 {
		t.Errorf("value gone at %d intervals: %+v", expireIntervals, s)
	}
	s := r.snapshot(newest.Add(expireIntervals*time.Minute + time.Second))
	if s.values != nil || s.age != expireIntervals*time.Minute+time.Second {
		t.Errorf("after expiry: %+v", s)
	}
}

// Before any value, the age counts from the start of reading.
func TestAgeBeforeAnyValue(t *testing.T) {
	started := time.Now()
	r := &Reader{opts: Options{Interval: time.Minute}, state: state{started: started}}
	if s := r.snapshot(started.Add(7 * time.Minute)); s.age != 7*time.Minute || s.values != nil {
		t.Errorf("snapshot %+v", s)
	}
}

func TestISODuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "PT1M", 5 * time.Minute: "PT5M", time.Hour: "PT1H", 200 * time.Millisecond: "PT0.2S", 90 * time.Second: "PT90S",
	} {
		if got := isoDuration(d); got != want {
			t.Errorf("isoDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
