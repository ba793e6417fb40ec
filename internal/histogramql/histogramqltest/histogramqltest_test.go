package histogramqltest

import (
	"reflect"
	"strings"
	"testing"
)

const h = "m_seconds"

func TestChainsSplitAtEveryDepth(t *testing.T) {
	for _, c := range []struct {
		expr string
		want [][]string
	}{
		{"a", nil},
		{"a or b", [][]string{{"a", "b"}}},
		{"1 - (a\nor\nb or c)", [][]string{{"a", "b", "c"}}},
		{"(a or b) / (c or d * 0)", [][]string{{"a", "b"}, {"c", "d * 0"}}},
		{"x or (y or z)", [][]string{{"y", "z"}, {"x", "(y or z)"}}},
		{"sum(a) or on () sum by (le) (b)", [][]string{{"sum(a)", "on () sum by (le) (b)"}}},
		// Not the keyword: inside strings, matchers, ranges and names.
		{`a{x="p or q", y=~'or'} + floor(b[5m]) + color_or:x or_else`, nil},
		{"`or` + \"a \\\" or b\"", nil},
	} {
		if got := Chains(c.expr); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Chains(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestFormsTellNativeFromClassic(t *testing.T) {
	for _, c := range []struct {
		expr            string
		native, classic bool
	}{
		{"rate(m_seconds[5m])", true, false},
		{"rate(m_seconds{le=~\"1|1.0\"}[5m])", true, false},
		{"rate(m_seconds_bucket[5m])", false, true},
		{"rate(m_seconds_count[5m]) + m_seconds_sum", false, true},
		{"m_seconds_total + rate(x_m_seconds[1m])", false, false},
		{`up{name="m_seconds_bucket"}`, false, false},
	} {
		if n, cl := Forms(c.expr, h); n != c.native || cl != c.classic {
			t.Errorf("Forms(%q) = %v, %v; want %v, %v", c.expr, n, cl, c.native, c.classic)
		}
	}
}

var (
	native  = "histogram_quantile(0.99, sum by (s) (rate(m_seconds[5m])))"
	classic = "histogram_quantile(0.99, sum by (s, le) (rate(m_seconds_bucket[5m])))"
)

func TestNativeFirstAcceptsTheNativeFormOnTheLeft(t *testing.T) {
	for _, expr := range []string{
		native + " or " + classic,
		"1 - (\n  " + native + "\nor\n  " + classic + "\n)",
		"bad / (bad + (" + native + " or " + classic + " or bad * 0))",
		"sum(rate(m_seconds[1m])) or on () sum by (le) (rate(m_seconds_bucket[1m]))",
		"rate(other_total[5m])", // reads no histogram
	} {
		if err := NativeFirst(expr, h, "other_seconds"); err != nil {
			t.Errorf("NativeFirst(%q): %v", expr, err)
		}
	}
}

func TestNativeFirstRefuses(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{classic + " or " + native, "the classic form comes first"},
		{"1 - (" + classic + "\nor\n" + native + ")", "the classic form comes first"},
		{"x / (" + classic + " or " + native + " or x * 0)", "the classic form comes first"},
		{"sum by (le) (rate(m_seconds_bucket[1m])) or on () sum(rate(m_seconds[1m]))", "the classic form comes first"},
		{classic, "only as classic series"},
		{native, "only as a native histogram"},
		{native + " / " + classic, "no `or` joins"},
	} {
		err := NativeFirst(c.expr, h)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), h) {
			t.Errorf("NativeFirst(%q) = %v, want an error naming %s with %q", c.expr, err, h, c.want)
		}
	}
}
