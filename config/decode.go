package config

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree into the config structs itself rather than
// using yaml's struct decoding, so every error carries the line and the key
// path, and so the line of every key is remembered for validation errors.
type decoder struct {
	file  string
	lines map[string]int // key path → line where it was written (not null)
}

// defaulter is implemented by list items that start from Default* values.
type defaulter interface{ setDefaults() }

type pair struct{ key, value *yaml.Node }

var (
	durationType = reflect.TypeOf(time.Duration(0))
	yamlLineErr  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// document parses data and returns its root node, nil for an empty file.
func (d *decoder) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, d.syntaxError(err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, errorAt(d.file, next.Line, "", "only one YAML document is allowed")
	case !errors.Is(err, io.EOF):
		return nil, d.syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// syntaxError turns "yaml: line 3: msg" into file:3: msg.
func (d *decoder) syntaxError(err error) *Error {
	msg := err.Error()
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return errorAt(d.file, line, "", "%s", m[2])
	}
	return errorAt(d.file, 0, "", "%s", strings.TrimPrefix(msg, "yaml: "))
}

// decode stores node n, found at key path, into out.
func (d *decoder) decode(n *yaml.Node, path string, out reflect.Value) error {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty value keeps the default
	}
	if out.Type() == durationType {
		return d.duration(n, path, out)
	}
	switch out.Kind() {
	case reflect.Pointer:
		return d.pointer(n, path, out)
	case reflect.Struct:
		return d.structure(n, path, out)
	case reflect.Slice:
		return d.list(n, path, out)
	case reflect.Map:
		return d.stringMap(n, path, out)
	case reflect.String:
		return d.str(n, path, out)
	case reflect.Bool:
		return d.boolean(n, path, out)
	case reflect.Int, reflect.Int64:
		return d.integer(n, path, out)
	case reflect.Float64:
		return d.float(n, path, out)
	}
	panic("config: no decoder for " + out.Type().String()) // a schema bug, caught by tests
}

func (d *decoder) structure(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.MappingNode {
		return d.kindError(n, path, "a mapping")
	}
	pairs, err := d.pairs(n, path, map[*yaml.Node]bool{})
	if err != nil {
		return err
	}
	fields := yamlFields(out.Type())
	for _, p := range pairs {
		i, ok := fields[p.key.Value]
		if !ok {
			return errorAt(d.file, p.key.Line, path, "unknown key %q", p.key.Value)
		}
		child := keyPath(path, p.key.Value)
		if !isNull(p.value) {
			d.lines[child] = p.key.Line
		}
		if err := d.decode(p.value, child, out.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

// pointer decodes an optional section: written, it is allocated and starts
// from its defaults like a list item; left out or null, it stays nil.
func (d *decoder) pointer(n *yaml.Node, path string, out reflect.Value) error {
	elem := reflect.New(out.Type().Elem())
	if def, ok := elem.Interface().(defaulter); ok {
		def.setDefaults()
	}
	if err := d.decode(n, path, elem.Elem()); err != nil {
		return err
	}
	out.Set(elem)
	return nil
}

func (d *decoder) list(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.SequenceNode {
		return d.kindError(n, path, "a list")
	}
	items := reflect.MakeSlice(out.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		p := indexPath(path, i)
		d.lines[p] = item.Line
		elem := reflect.New(out.Type().Elem())
		if def, ok := elem.Interface().(defaulter); ok {
			def.setDefaults()
		}
		if err := d.decode(item, p, elem.Elem()); err != nil {
			return err
		}
		items = reflect.Append(items, elem.Elem())
	}
	out.Set(items)
	return nil
}

// stringMap decodes a map[string]string such as headers.
func (d *decoder) stringMap(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.MappingNode {
		return d.kindError(n, path, "a mapping")
	}
	pairs, err := d.pairs(n, path, map[*yaml.Node]bool{})
	if err != nil {
		return err
	}
	m := reflect.MakeMapWithSize(out.Type(), len(pairs))
	for _, p := range pairs {
		child := keyPath(path, p.key.Value)
		d.lines[child] = p.key.Line
		v := reflect.New(out.Type().Elem()).Elem()
		if err := d.decode(p.value, child, v); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(p.key.Value), v)
	}
	out.Set(m)
	return nil
}

func (d *decoder) str(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.ScalarNode {
		return d.kindError(n, path, "a string")
	}
	out.SetString(n.Value)
	return nil
}

func (d *decoder) boolean(n *yaml.Node, path string, out reflect.Value) error {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return d.kindError(n, path, "true or false")
	}
	out.SetBool(b)
	return nil
}

// integer accepts only YAML integers: yaml.v3 would silently truncate 1.5.
func (d *decoder) integer(n *yaml.Node, path string, out reflect.Value) error {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return d.kindError(n, path, "an integer")
	}
	if n.Decode(&v) != nil || out.OverflowInt(v) {
		return errorAt(d.file, n.Line, path, "integer %q is out of range", n.Value)
	}
	out.SetInt(v)
	return nil
}

// float accepts YAML integers and finite floats; "1e-2" is read as a float
// too, while .nan, .inf and strings are refused.
func (d *decoder) float(n *yaml.Node, path string, out reflect.Value) error {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") || n.Decode(&v) != nil {
		return d.kindError(n, path, "a number")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return errorAt(d.file, n.Line, path, "expected a finite number, got %q", n.Value)
	}
	out.SetFloat(v)
	return nil
}

func (d *decoder) duration(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.ScalarNode {
		return d.kindError(n, path, "a duration such as \"10s\"")
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return errorAt(d.file, n.Line, path, "expected a duration such as \"10s\", got %q", n.Value)
	}
	out.SetInt(int64(v))
	return nil
}

// kindError reports a value of the wrong shape, quoting scalars.
func (d *decoder) kindError(n *yaml.Node, path, want string) *Error {
	got := "a mapping"
	switch n.Kind {
	case yaml.ScalarNode:
		got = strconv.Quote(n.Value)
	case yaml.SequenceNode:
		got = "a list"
	}
	return errorAt(d.file, n.Line, path, "expected %s, got %s", want, got)
}

// pairs returns the key/value pairs of mapping n, with YAML merge keys
// ("<<: *anchor") expanded: explicit keys win over merged ones, and earlier
// merge sources over later ones. visited stops alias cycles and keeps the
// work linear when the same anchor is merged many times.
func (d *decoder) pairs(n *yaml.Node, path string, visited map[*yaml.Node]bool) ([]pair, error) {
	visited[n] = true
	var out, merged []pair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, errorAt(d.file, k.Line, path, "keys must be strings")
		}
		if k.ShortTag() == "!!merge" {
			more, err := d.mergeSources(v, path, visited)
			if err != nil {
				return nil, err
			}
			merged = append(merged, more...)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			return nil, errorAt(d.file, k.Line, path, "duplicate key %q (first at line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line
		out = append(out, pair{k, v})
	}
	for _, p := range merged {
		if _, ok := seen[p.key.Value]; !ok {
			seen[p.key.Value] = p.key.Line
			out = append(out, p)
		}
	}
	return out, nil
}

// mergeSources expands the value of a "<<" key: a mapping or a list of them.
func (d *decoder) mergeSources(v *yaml.Node, path string, visited map[*yaml.Node]bool) ([]pair, error) {
	sources := []*yaml.Node{v}
	if r := resolveAlias(v); r.Kind == yaml.SequenceNode {
		sources = r.Content
	}
	var out []pair
	for _, s := range sources {
		s = resolveAlias(s)
		if s.Kind != yaml.MappingNode {
			return nil, errorAt(d.file, s.Line, path, "\"<<\" expects a mapping or a list of mappings")
		}
		if visited[s] {
			continue
		}
		more, err := d.pairs(s, path, visited)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolveAlias(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// yamlFields maps each yaml key of struct type t to its field index.
func yamlFields(t reflect.Type) map[string]int {
	fields := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = i
		}
	}
	return fields
}
