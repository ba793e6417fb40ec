package tiers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// WorkloadError is a problem in a workload file. It renders as
// "file:line: key: msg" so the message points at the offending spot.
type WorkloadError struct {
	File string
	Line int    // 0 when the problem has no single line
	Key  string // key path such as "scenarios[0].senders"; empty for the document
	Msg  string
}

func (e *WorkloadError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadWorkload reads and validates the workload file at path.
func LoadWorkload(path string) (Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Workload{}, &WorkloadError{File: path, Msg: "cannot read: " + errors.Unwrap(err).Error()}
	}
	return ParseWorkload(data, path)
}

// ParseWorkload decodes a workload strictly (unknown or repeated keys and
// wrongly typed values are errors) and validates it; file names the source
// in errors. Every error is a *WorkloadError.
func ParseWorkload(data []byte, file string) (Workload, error) {
	d := &workloadDecoder{file: file, lines: map[string]int{}}
	root, err := d.document(data)
	if err != nil {
		return Workload{}, err
	}
	w, err := d.workload(root)
	if err != nil {
		return Workload{}, err
	}
	svc, err := lookupService(w.Service)
	if err != nil {
		return Workload{}, d.errAt("service", "%v", err)
	}
	if ferr := w.withDefaults().validate(svc); ferr != nil {
		return Workload{}, d.errAt(ferr.Path, "%s", ferr.Msg)
	}
	return w, nil
}

// workloadDecoder walks the YAML node tree itself, so every error carries
// the line and the key path, and remembers where each key was written.
type workloadDecoder struct {
	file  string
	lines map[string]int // key path → line
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (d *workloadDecoder) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &WorkloadError{File: d.file, Msg: "the workload is empty"}
		}
		return nil, d.syntaxError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, &WorkloadError{File: d.file, Line: next.Line, Msg: "only one YAML document is allowed"}
	} else if !errors.Is(err, io.EOF) {
		return nil, d.syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, &WorkloadError{File: d.file, Msg: "the workload is empty"}
	}
	return doc.Content[0], nil
}

func (d *workloadDecoder) syntaxError(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &WorkloadError{File: d.file, Line: line, Msg: m[2]}
	}
	return &WorkloadError{File: d.file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

// errAt builds an error for a key path, at the line the key was written on,
// or at its nearest written parent when the key is missing.
func (d *workloadDecoder) errAt(path, format string, args ...any) error {
	line := 0
	for p := path; p != "" && line == 0; p = parentPath(p) {
		line = d.lines[p]
	}
	return &WorkloadError{File: d.file, Line: line, Key: path, Msg: fmt.Sprintf(format, args...)}
}

func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}

func (d *workloadDecoder) nodeErr(n *yaml.Node, path, format string, args ...any) error {
	return &WorkloadError{File: d.file, Line: n.Line, Key: path, Msg: fmt.Sprintf(format, args...)}
}

// fields iterates the pairs of a mapping, rejecting repeated keys.
func (d *workloadDecoder) fields(n *yaml.Node, path string, each func(key string, v *yaml.Node, child string) error) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return d.nodeErr(n, path, "expected a mapping, got %s", describe(n))
	}
	d.lines[path] = n.Line
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if first, dup := seen[k.Value]; dup {
			return d.nodeErr(k, path, "duplicate key %q (first at line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line
		child := k.Value
		if path != "" {
			child = path + "." + k.Value
		}
		d.lines[child] = k.Line
		if err := each(k.Value, v, child); err != nil {
			return err
		}
	}
	return nil
}

func (d *workloadDecoder) workload(n *yaml.Node) (Workload, error) {
	var w Workload
	err := d.fields(n, "", func(key string, v *yaml.Node, path string) error {
		switch key {
		case "service":
			return d.str(v, path, &w.Service)
		case "max_load":
			return d.ratio(v, path, &w.MaxLoad)
		case "connections":
			return d.integer(v, path, &w.Connections)
		case "scenarios":
			return d.loads(v, path, &w.Scenarios)
		}
		return d.unknownKey(v, path, "service, max_load, connections, scenarios")
	})
	return w, err
}

func (d *workloadDecoder) loads(n *yaml.Node, path string, out *[]Load) error {
	if n.Kind != yaml.SequenceNode {
		return d.nodeErr(n, path, "expected a list, got %s", describe(n))
	}
	for i, item := range n.Content {
		p := path + "[" + strconv.Itoa(i) + "]"
		d.lines[p] = item.Line
		l, err := d.load(item, p)
		if err != nil {
			return err
		}
		*out = append(*out, l)
	}
	return nil
}

func (d *workloadDecoder) load(n *yaml.Node, path string) (Load, error) {
	var l Load
	err := d.fields(n, path, func(key string, v *yaml.Node, p string) error {
		switch key {
		case "name":
			return d.str(v, p, &l.Name)
		case "kind":
			return d.str(v, p, &l.Kind)
		case "connections":
			return d.integer(v, p, &l.Connections)
		case "senders":
			return d.integer(v, p, &l.Senders)
		case "message_size":
			return d.size(v, p, &l.MessageSize)
		case "send_interval":
			return d.duration(v, p, &l.SendInterval)
		case "group_size":
			return d.integer(v, p, &l.GroupSize)
		case "group_count":
			return d.integer(v, p, &l.GroupCount)
		}
		return d.unknownKey(v, p, "name, kind, connections, senders, message_size, send_interval, group_size, group_count")
	})
	return l, err
}

// unknownKey reports key path p at the key's line, named under its parent
// as the configuration file's errors do.
func (d *workloadDecoder) unknownKey(v *yaml.Node, p, known string) error {
	key := p[strings.LastIndex(p, ".")+1:]
	return &WorkloadError{File: d.file, Line: d.lines[p], Key: parentPath(p), Msg: fmt.Sprintf("unknown key %q (valid: %s)", key, known)}
}

func (d *workloadDecoder) str(n *yaml.Node, path string, out *string) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return d.nodeErr(n, path, "expected a string, got %s", describe(n))
	}
	*out = n.Value
	return nil
}

// integer accepts only YAML integers: 1.5 connections is a mistake, not 1.
func (d *workloadDecoder) integer(n *yaml.Node, path string, out *int64) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return d.nodeErr(n, path, "expected an integer, got %s", describe(n))
	}
	if err := n.Decode(out); err != nil {
		return d.nodeErr(n, path, "integer %q is out of range", n.Value)
	}
	return nil
}

func (d *workloadDecoder) ratio(n *yaml.Node, path string, out *float64) error {
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!float" && tag != "!!int") || n.Decode(out) != nil {
		return d.nodeErr(n, path, "expected a number such as 0.7, got %s", describe(n))
	}
	return nil
}

func (d *workloadDecoder) size(n *yaml.Node, path string, out *int64) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		return d.integer(n, path, out)
	}
	v, err := ParseSize(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return d.nodeErr(n, path, "expected a size such as 2048, \"2KiB\" or \"20kB\", got %s", describe(n))
	}
	*out = v
	return nil
}

func (d *workloadDecoder) duration(n *yaml.Node, path string, out *time.Duration) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || err != nil {
		return d.nodeErr(n, path, "expected a duration such as \"1s\" or \"500ms\", got %s", describe(n))
	}
	*out = v
	return nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

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
