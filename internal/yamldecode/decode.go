// Package yamldecode decodes hubprobe's YAML files strictly (the
// configuration with its profiles, capacity-plan workloads and the tier
// tables): unknown and repeated keys are errors, values are typed without
// silent conversion, merge keys ("<<: *anchor") work, and every error is an
// *Error that names file, line and key.
//
// It walks the yaml.Node tree itself rather than using yaml's struct
// decoding, so every error carries the line and the key path, and so the
// line of every key is remembered for the caller's validation errors.
package yamldecode

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Decoder decodes one file and then answers where each key was written.
type Decoder struct {
	file  string
	lines map[string]int // key path → line where it was written (not null)
	empty map[string]int // key path → line where it was written null
}

// Defaulter is implemented by list items and optional sections that start
// from default values rather than zero: the decoder calls SetDefaults on a
// fresh value before decoding the file's keys on top.
type Defaulter interface{ SetDefaults() }

// Scalar is implemented by types that parse their own scalars, such as a
// size written "2KiB". A YAML integer goes into an integer-kinded Scalar as
// an integer; any other scalar goes to ParseScalar.
type Scalar interface {
	ParseScalar(text string) error
	// Expected names what is accepted, as in "expected <Expected>, got …".
	Expected() string
}

type pair struct{ key, value *yaml.Node }

var (
	durationType = reflect.TypeOf(time.Duration(0))
	yamlLineErr  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// New returns a decoder for the file named file in errors.
func New(file string) *Decoder {
	return &Decoder{file: file, lines: map[string]int{}, empty: map[string]int{}}
}

// Decode decodes data, which may hold at most one YAML document, into out,
// a pointer to a struct whose fields carry yaml tags. A key written with an
// empty (null) value keeps what out held. found is false when data holds no
// document at all, only comments or nothing; out is then untouched.
func (d *Decoder) Decode(data []byte, out any) (found bool, err error) {
	root, err := d.document(data)
	if err != nil || root == nil {
		return false, err
	}
	if err := d.decode(root, "", reflect.ValueOf(out).Elem()); err != nil {
		return true, err
	}
	return true, nil
}

// Has reports whether key was written in the file with a non-null value.
func (d *Decoder) Has(key string) bool {
	_, ok := d.lines[key]
	return ok
}

// EmptyKeys maps every struct key written with an empty (null) value, which
// kept what out held, to its line.
func (d *Decoder) EmptyKeys() map[string]int { return maps.Clone(d.empty) }

// LineOf finds where key, or failing that its nearest parent, was written;
// 0 when none of them was.
func (d *Decoder) LineOf(key string) int {
	for ; key != ""; key = parentPath(key) {
		if line, ok := d.lines[key]; ok {
			return line
		}
	}
	return 0
}

// Errorf builds an *Error for key at the line LineOf gives.
func (d *Decoder) Errorf(key, format string, args ...any) *Error {
	return errorAt(d.file, d.LineOf(key), key, format, args...)
}

// ErrorAt builds an *Error for key at a given line.
func (d *Decoder) ErrorAt(line int, key, format string, args ...any) *Error {
	return errorAt(d.file, line, key, format, args...)
}

// document parses data and returns its root node, nil for an empty file.
func (d *Decoder) document(data []byte) (*yaml.Node, error) {
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
		return nil, d.ErrorAt(next.Line, "", "only one YAML document is allowed")
	case !errors.Is(err, io.EOF):
		return nil, d.syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// syntaxError turns "yaml: line 3: msg" into file:3: msg.
func (d *Decoder) syntaxError(err error) *Error {
	msg := err.Error()
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return d.ErrorAt(line, "", "%s", m[2])
	}
	return d.ErrorAt(0, "", "%s", strings.TrimPrefix(msg, "yaml: "))
}

// decode stores node n, found at key path, into out.
func (d *Decoder) decode(n *yaml.Node, path string, out reflect.Value) error {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // an empty value keeps the default
	}
	if s, ok := out.Addr().Interface().(Scalar); ok {
		return d.scalar(n, path, out, s)
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
	panic("yamldecode: no decoder for " + out.Type().String()) // a schema bug, caught by tests
}

func (d *Decoder) structure(n *yaml.Node, path string, out reflect.Value) error {
	pairs, err := d.mapping(n, path)
	if err != nil {
		return err
	}
	fields := yamlFields(out.Type())
	for _, p := range pairs {
		i, ok := fields[p.key.Value]
		if !ok {
			return d.ErrorAt(p.key.Line, path, "unknown key %q", p.key.Value)
		}
		child := KeyPath(path, p.key.Value)
		if !isNull(p.value) {
			d.lines[child] = p.key.Line
		} else {
			d.empty[child] = p.key.Line
		}
		if err := d.decode(p.value, child, out.Field(i)); err != nil {
			return err
		}
	}
	return nil
}

// pointer decodes an optional section: written, it is allocated and starts
// from its defaults like a list item; left out or null, it stays nil.
func (d *Decoder) pointer(n *yaml.Node, path string, out reflect.Value) error {
	elem := newDefault(out.Type().Elem())
	if err := d.decode(n, path, elem.Elem()); err != nil {
		return err
	}
	out.Set(elem)
	return nil
}

func (d *Decoder) list(n *yaml.Node, path string, out reflect.Value) error {
	if n.Kind != yaml.SequenceNode {
		return d.kindError(n, path, "a list")
	}
	items := reflect.MakeSlice(out.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		p := IndexPath(path, i)
		d.lines[p] = item.Line
		elem := newDefault(out.Type().Elem())
		if err := d.decode(item, p, elem.Elem()); err != nil {
			return err
		}
		items = reflect.Append(items, elem.Elem())
	}
	out.Set(items)
	return nil
}

// newDefault allocates a t, set to its defaults when it has any.
func newDefault(t reflect.Type) reflect.Value {
	elem := reflect.New(t)
	if def, ok := elem.Interface().(Defaulter); ok {
		def.SetDefaults()
	}
	return elem
}

// stringMap decodes a map with string keys, such as headers.
func (d *Decoder) stringMap(n *yaml.Node, path string, out reflect.Value) error {
	pairs, err := d.mapping(n, path)
	if err != nil {
		return err
	}
	m := reflect.MakeMapWithSize(out.Type(), len(pairs))
	for _, p := range pairs {
		child := KeyPath(path, p.key.Value)
		d.lines[child] = p.key.Line
		v := reflect.New(out.Type().Elem()).Elem()
		if err := d.decode(p.value, child, v); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(p.key.Value).Convert(out.Type().Key()), v)
	}
	out.Set(m)
	return nil
}
