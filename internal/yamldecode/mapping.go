package yamldecode

import (
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// mapping returns the key/value pairs of n, which must be a mapping.
func (d *Decoder) mapping(n *yaml.Node, path string) ([]pair, error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.kindError(n, path, "a mapping")
	}
	return d.pairs(n, path, map[*yaml.Node]bool{})
}

// pairs returns the key/value pairs of mapping n, with YAML merge keys
// ("<<: *anchor") expanded: explicit keys win over merged ones, and earlier
// merge sources over later ones. A key written twice is an error. visited
// stops alias cycles and keeps the work linear when the same anchor is
// merged many times.
func (d *Decoder) pairs(n *yaml.Node, path string, visited map[*yaml.Node]bool) ([]pair, error) {
	visited[n] = true
	var out, merged []pair
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, d.ErrorAt(k.Line, path, "keys must be strings")
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
			return nil, d.ErrorAt(k.Line, path, "duplicate key %q (first at line %d)", k.Value, first)
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
func (d *Decoder) mergeSources(v *yaml.Node, path string, visited map[*yaml.Node]bool) ([]pair, error) {
	sources := []*yaml.Node{v}
	if r := resolveAlias(v); r.Kind == yaml.SequenceNode {
		sources = r.Content
	}
	var out []pair
	for _, s := range sources {
		s = resolveAlias(s)
		if s.Kind != yaml.MappingNode {
			return nil, d.ErrorAt(s.Line, path, "\"<<\" expects a mapping or a list of mappings")
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
		if name := fieldKey(t.Field(i)); name != "" {
			fields[name] = i
		}
	}
	return fields
}

// Keys lists the keys that struct type t accepts, in field order.
func Keys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if name := fieldKey(t.Field(i)); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
}

// fieldKey is the key of a field from its yaml tag; "" for none or "-".
func fieldKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}
