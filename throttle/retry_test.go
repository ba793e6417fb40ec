package throttle

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2", 2 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"99999999999999999999", time.Duration(math.MaxInt64), true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Saturday, 01-Mar-25 12:00:05 GMT", 5 * time.Second, true}, // RFC 850, still allowed
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The ceiling doubles from Base to Cap; the draw is jitter times the
// ceiling, never below Min.
func TestBackoffWait(t *testing.T) {
	b := Backoff{Base: time.Minute, Cap: 8 * time.Minute, Min: time.Minute}
	var got []time.Duration
	for retry := 1; retry <= 6; retry++ {
		got = append(got, b.Wait(retry, 1))
	}
	if fmt.Sprint(got) != "[1m0s 2m0s 4m0s 8m0s 8m0s 8m0s]" {
		t.Errorf("ceilings %v", got)
	}
	if d := b.Wait(3, 0.5); d != 2*time.Minute {
		t.Errorf("retry 3, jitter 0.5: %s, want 2m", d)
	}
	if d := b.Wait(1000, math.NaN()); d != time.Minute {
		t.Errorf("NaN jitter: %s, want Min", d)
	}
}
