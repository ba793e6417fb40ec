package slo

import (
	"math"
	"testing"
	"time"
)

func TestOutcomeOfTheOneSecondBoundary(t *testing.T) {
	for latency, want := range map[time.Duration]string{
		0: OutcomeWithin, 999 * time.Millisecond: OutcomeWithin, time.Second: OutcomeWithin,
		time.Second + time.Nanosecond: OutcomeOver, time.Minute: OutcomeOver,
	} {
		if got := OutcomeOf(latency); got != want {
			t.Errorf("OutcomeOf(%s) = %s, want %s", latency, got, want)
		}
	}
}

func TestCheckRatio(t *testing.T) {
	for ratio, ok := range map[float64]bool{
		0.99: true, 0.5: true, 1e-9: true, 0.999999: true,
		0: false, 1: false, -0.1: false, 99: false, math.NaN(): false, math.Inf(1): false,
	} {
		if msg := CheckRatio(ratio); (msg == "") != ok {
			t.Errorf("CheckRatio(%g) = %q, want ok %v", ratio, msg, ok)
		}
	}
	if got := CheckRatio(1); got != "must be greater than 0 and less than 1 (0.99 is 99 %), got 1" {
		t.Errorf("CheckRatio(1) = %q", got)
	}
}

func TestWindows(t *testing.T) {
	if msg := CheckWindow(28 * Day); msg != "" {
		t.Errorf("28d refused: %s", msg)
	}
	if msg := CheckWindow(DefaultWindow); msg != "" {
		t.Errorf("30d refused: %s", msg)
	}
	if got := CheckWindow(7 * Day); got != "must be one of 28d or 30d, got 7d" {
		t.Errorf("CheckWindow(7d) = %q", got)
	}
	for d, want := range map[time.Duration]string{
		30 * Day: "30d", 28 * Day: "28d", Day: "1d", 90 * time.Minute: "1h30m", 0: "0s",
	} {
		if got := WindowName(d); got != want {
			t.Errorf("WindowName(%s) = %q, want %q", d, got, want)
		}
	}
	for text, want := range map[string]time.Duration{"30d": 30 * Day, "4w": 28 * Day, "672h": 28 * Day, "1d12h": 36 * time.Hour} {
		if got, err := ParseWindow(text); err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %s, %v; want %s", text, got, err, want)
		}
	}
	if _, err := ParseWindow("a month"); err == nil {
		t.Error(`ParseWindow("a month") succeeded`)
	}
}

func TestBudget(t *testing.T) {
	if got := (Objective{Ratio: 0.995}).Budget(); math.Abs(got-0.005) > 1e-12 {
		t.Errorf("budget of 99.5 %% = %g, want 0.005", got)
	}
	if Default != (Objective{Ratio: 0.99, Window: 30 * Day}) {
		t.Errorf("default objective %+v, want 99 %% over 30d", Default)
	}
}
