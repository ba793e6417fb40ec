package yamldecode

import (
	"math"
	"reflect"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// str takes any scalar as its text: yaml.v3 would read an unquoted
// 2022-06-01 as a timestamp and 1.0 as a number, both meant as strings.
func (d *Decoder) str(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.ScalarNode {
		return d.kindError(n, path, "a string")
	}
	out.SetString(n.Value)
	return nil
}

func (d *Decoder) boolean(n *yaml.Node, path string, out reflect.Value) error {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return d.kindError(n, path, "true or false")
	}
	out.SetBool(b)
	return nil
}

// integer accepts only YAML integers: yaml.v3 would silently truncate 1.5.
func (d *Decoder) integer(n *yaml.Node, path string, out reflect.Value) error {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return d.kindError(n, path, "an integer")
	}
	if n.Decode(&v) != nil || out.OverflowInt(v) {
		return d.ErrorAt(n.Line, path, "integer %q is out of range", n.Value)
	}
	out.SetInt(v)
	return nil
}

// float accepts YAML integers and finite floats; "1e-2" is read as a float
// too, while .nan, .inf and strings are refused.
func (d *Decoder) float(n *yaml.Node, path string, out reflect.Value) error {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") || n.Decode(&v) != nil {
		return d.kindError(n, path, "a number")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return d.ErrorAt(n.Line, path, "expected a finite number, got %q", n.Value)
	}
	out.SetFloat(v)
	return nil
}

func (d *Decoder) duration(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.ScalarNode {
		return d.kindError(n, path, "a duration such as \"10s\"")
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return d.ErrorAt(n.Line, path, "expected a duration such as \"10s\", got %q", n.Value)
	}
	out.SetInt(int64(v))
	return nil
}

// scalar decodes a type with its own parser; see Scalar.
func (d *Decoder) scalar(n *yaml.Node, path string, out reflect.Value, s Scalar) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && out.CanInt() {
		return d.integer(n, path, out)
	}
	if n.Kind != yaml.ScalarNode || s.ParseScalar(n.Value) != nil {
		return d.kindError(n, path, s.Expected())
	}
	return nil
}

// kindError reports a value of the wrong shape, quoting scalars.
func (d *Decoder) kindError(n *yaml.Node, path, want string) *Error {
	got := "a mapping"
	switch n.Kind {
	case yaml.ScalarNode:
		got = strconv.Quote(n.Value)
	case yaml.SequenceNode:
		got = "a list"
	}
	return d.ErrorAt(n.Line, path, "expected %s, got %s", want, got)
}
