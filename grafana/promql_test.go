package grafana

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// metricUse is one metric name in an expression and the function call it
// sits in directly ("" at the top level or inside plain parentheses).
type metricUse struct {
	name, enclosing string
}

// labelListKeywords are followed by a parenthesised list of label names,
// not by an expression.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// wordOperators look like identifiers but are not metric names.
var wordOperators = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricUses lists every metric name in a PromQL expression with the
// function that directly encloses it. It is a small scanner, not a full
// parser: it skips strings, label matchers {…} and ranges […], and treats an
// identifier followed by "(" as a function or aggregation.
func metricUses(expr string) []metricUse {
	var uses []metricUse
	var frames []string // function names of the open parentheses
	pendingCall := ""
	// aggregator is set between "sum by (labels)" and the "(" that follows.
	aggregator := ""
	for i := 0; i < len(expr); {
		c := rune(expr[i])
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipQuoted(expr, i)
		case c == '{':
			i = skipTo(expr, i, '}')
		case c == '[':
			i = skipTo(expr, i, ']')
		case c == '(':
			frames = append(frames, pendingCall)
			pendingCall = ""
			i++
		case c == ')':
			if len(frames) > 0 {
				closed := frames[len(frames)-1]
				frames = frames[:len(frames)-1]
				if (closed == "by" || closed == "without") && aggregator != "" {
					pendingCall, aggregator = aggregator, ""
				}
			}
			i++
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdentPart(rune(expr[j])) {
				j++
			}
			word := expr[i:j]
			next := strings.TrimLeft(expr[j:], " \t\n")
			switch {
			case strings.HasPrefix(next, "("):
				pendingCall = word
			case startsWithWord(next, "by"), startsWithWord(next, "without"):
				aggregator = word
			case wordOperators[strings.ToLower(word)], inLabelList(frames):
			default:
				uses = append(uses, metricUse{name: word, enclosing: innermost(frames)})
			}
			i = j
		case unicode.IsDigit(c) || c == '.':
			i = skipNumber(expr, i)
		default:
			i++
		}
	}
	return uses
}

// startsWithWord reports whether s begins with the whole word w.
func startsWithWord(s, w string) bool {
	return strings.HasPrefix(s, w) && (len(s) == len(w) || !isIdentPart(rune(s[len(w)])))
}

func inLabelList(frames []string) bool {
	return len(frames) > 0 && labelListKeywords[frames[len(frames)-1]]
}

func innermost(frames []string) string {
	if len(frames) == 0 {
		return ""
	}
	return frames[len(frames)-1]
}

func isIdentStart(c rune) bool { return c == '_' || c == ':' || unicode.IsLetter(c) }

func isIdentPart(c rune) bool { return isIdentStart(c) || unicode.IsDigit(c) }

func skipQuoted(s string, i int) int {
	quote := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] == '\\' && quote != '`' {
			j++
			continue
		}
		if s[j] == quote {
			return j + 1
		}
	}
	return len(s)
}

// skipTo skips past the closing character, stepping over quoted strings
// (a label matcher's value may contain "}" or "]").
func skipTo(s string, i int, closing byte) int {
	for j := i + 1; j < len(s); {
		switch s[j] {
		case '"', '\'', '`':
			j = skipQuoted(s, j)
		case closing:
			return j + 1
		default:
			j++
		}
	}
	return len(s)
}

// skipNumber skips a number literal (1, 0.99, 1e-3) or a duration (5m).
func skipNumber(s string, i int) int {
	j := i
	for j < len(s) && (unicode.IsDigit(rune(s[j])) || strings.ContainsRune(".eE", rune(s[j])) ||
		((s[j] == '-' || s[j] == '+') && j > i && (s[j-1] == 'e' || s[j-1] == 'E'))) {
		j++
	}
	// A duration such as 5m or 1h30m is a number followed by units.
	for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
		j++
	}
	return j
}

// isCounterLike reports whether a name must only be read through rate() or
// increase(): counters, and histograms in either form (a native histogram
// counts up like its classic series).
func isCounterLike(name string) bool {
	if _, _, ok := cataloguetest.HistogramOf(documented(), name); ok {
		return true
	}
	// A gauge of the catalogue is one whatever its name says
	// (hubprobe_shard_count).
	if row, ok := documented()[name]; ok && row.Type == "gauge" {
		return false
	}
	for _, suffix := range []string{"_total", "_bucket", "_count", "_sum"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

var rateFunctions = map[string]bool{"rate": true, "irate": true, "increase": true}

// The scanner is what the dashboard rules stand on, so it is tested first.
func TestMetricUses(t *testing.T) {
	cases := []struct {
		expr string
		want []metricUse
	}{
		{`rate(a_total{x="}"}[5m])`, []metricUse{{"a_total", "rate"}}},
		{`sum(a_total)`, []metricUse{{"a_total", "sum"}}},
		{`histogram_quantile(0.99, sum by (target, le) (rate(h_bucket{le=~"1|1.0"}[1m])))`,
			[]metricUse{{"h_bucket", "rate"}}},
		{`1 - (sum by (t) (rate(b[1m])) / on (t) group_left (x) c)`,
			[]metricUse{{"b", "rate"}, {"c", ""}}},
		{`time() - max(last_run{a="b"}) > 1e-3 and bool up offset 5m`,
			[]metricUse{{"last_run", "max"}, {"up", ""}}},
		{`increase(x_total[$__rate_interval]) * 8`, []metricUse{{"x_total", "increase"}}},
	}
	for _, c := range cases {
		if got := metricUses(c.expr); !reflect.DeepEqual(got, c.want) {
			t.Errorf("metricUses(%s) = %v, want %v", c.expr, got, c.want)
		}
	}
}
