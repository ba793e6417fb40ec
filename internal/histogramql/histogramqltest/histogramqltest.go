// Package histogramqltest checks generated PromQL for how it reads a
// histogram that Prometheus may store classic, native or both (see package
// histogramql): that an expression reads both forms, and that wherever the
// forms meet in an `or`, the native form comes first. `or` keeps the left
// operand's series where both sides have the same labels, so with both
// forms stored the native answer is kept only when it is on the left.
//
// The rules and dashboards are generated; these checks run on what the
// generators return, so that regenerating them cannot flip the order
// unnoticed. No product code imports this package.
package histogramqltest

import (
	"errors"
	"fmt"
	"strings"
)

// Chains returns every `or` chain of expr, at every depth of parentheses,
// each as its operands in order (an `or on (…)` modifier stays at the start
// of its right operand). `or` binds loosest in PromQL, so the operands of a
// chain are exactly the text between its `or`s within one pair of
// parentheses. Strings, label matchers and range selectors are skipped.
func Chains(expr string) [][]string {
	var chains [][]string
	stack := []*group{{}}
	for i := 0; i < len(expr); i++ {
		g := stack[len(stack)-1]
		switch c := expr[i]; {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{' || c == '[':
			i = skipBlock(expr, i)
		case c == '(':
			stack = append(stack, &group{start: i + 1})
		case c == ')' && len(stack) > 1:
			if ops := g.end(expr, i); len(ops) > 1 {
				chains = append(chains, ops)
			}
			stack = stack[:len(stack)-1]
		case isOr(expr, i):
			g.operands = append(g.operands, strings.TrimSpace(expr[g.start:i]))
			g.start = i + 2
			i++
		}
	}
	if ops := stack[0].end(expr, len(expr)); len(ops) > 1 {
		chains = append(chains, ops)
	}
	return chains
}

// group is one pair of parentheses (or the whole expression) being read.
type group struct {
	start    int // where the current operand begins
	operands []string
}

func (g *group) end(expr string, at int) []string {
	return append(g.operands, strings.TrimSpace(expr[g.start:at]))
}

// isOr reports whether the keyword or starts at i.
func isOr(expr string, i int) bool {
	if !strings.HasPrefix(expr[i:], "or") {
		return false
	}
	before := i == 0 || !isIdentChar(expr[i-1])
	after := i+2 == len(expr) || !isIdentChar(expr[i+2])
	return before && after
}

func isIdentChar(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipString returns the index of the quote that closes the string opened
// at i; backquoted strings have no escapes.
func skipString(expr string, i int) int {
	quote := expr[i]
	for j := i + 1; j < len(expr); j++ {
		switch expr[j] {
		case '\\':
			if quote != '`' {
				j++
			}
		case quote:
			return j
		}
	}
	return len(expr)
}

// skipBlock returns the index of the brace or bracket that closes the one
// opened at i, skipping the strings inside.
func skipBlock(expr string, i int) int {
	closing := byte('}')
	if expr[i] == '[' {
		closing = ']'
	}
	for j := i + 1; j < len(expr); j++ {
		switch expr[j] {
		case '"', '\'', '`':
			j = skipString(expr, j)
		case closing:
			return j
		}
	}
	return len(expr)
}

// Forms reports whether expr reads histogram's native form (its bare name)
// and its classic form (name_bucket, name_count or name_sum).
func Forms(expr, histogram string) (native, classic bool) {
	for _, name := range identifiers(expr) {
		switch name {
		case histogram:
			native = true
		case histogram + "_bucket", histogram + "_count", histogram + "_sum":
			classic = true
		}
	}
	return native, classic
}

// identifiers lists the names in expr outside strings: metric, function
// and label names alike.
func identifiers(expr string) []string {
	var names []string
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case isIdentChar(c) && (c < '0' || c > '9'):
			j := i
			for j < len(expr) && isIdentChar(expr[j]) {
				j++
			}
			names = append(names, expr[i:j])
			i = j - 1
		}
	}
	return names
}

// NativeFirst checks expr against each histogram it reads: it must read
// both forms, join them with `or` at least once, and in every `or` chain
// where the histogram appears, the first operand that reads it must read
// its native form. The error names the histogram and what is wrong.
func NativeFirst(expr string, histograms ...string) error {
	var errs []error
	for _, h := range histograms {
		if err := nativeFirst(expr, h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func nativeFirst(expr, h string) error {
	native, classic := Forms(expr, h)
	switch {
	case !native && !classic:
		return nil
	case !native:
		return fmt.Errorf("%s is read only as classic series: empty where Prometheus stores only the native histogram", h)
	case !classic:
		return fmt.Errorf("%s is read only as a native histogram: empty where Prometheus stores only the classic series", h)
	}
	joined := false
	for _, chain := range Chains(expr) {
		ok, err := chainNativeFirst(chain, h)
		if err != nil {
			return err
		}
		joined = joined || ok
	}
	if !joined {
		return fmt.Errorf("%s is read in both forms, but no `or` joins its native form with its classic form after it", h)
	}
	return nil
}

// chainNativeFirst checks one `or` chain for h: an error when the first
// operand that reads h reads only its classic form; joined when that
// operand reads the native form and a later one the classic form.
func chainNativeFirst(chain []string, h string) (joined bool, err error) {
	first := -1
	for i, op := range chain {
		if n, c := Forms(op, h); n || c {
			first = i
			break
		}
	}
	if first < 0 {
		return false, nil
	}
	if native, _ := Forms(chain[first], h); !native {
		return false, fmt.Errorf("%s: the classic form comes first in `%s`: where Prometheus stores both forms, `or` keeps the classic answer, not the native one",
			h, strings.Join(chain, " or "))
	}
	for _, op := range chain[first+1:] {
		if _, c := Forms(op, h); c {
			return true, nil
		}
	}
	return false, nil
}
