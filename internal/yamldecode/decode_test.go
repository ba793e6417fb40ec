package yamldecode

import (
	"errors"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Most of the decoder is pinned through config's testdata/invalid-*.yml and
// the tiers workload tests; these cover what only the API shows.

// thousands is a Scalar: an integer, or digits with a "k" suffix for thousands.
type thousands int64

func (b *thousands) ParseScalar(text string) error {
	n, err := strconv.ParseInt(strings.TrimSuffix(text, "k"), 10, 64)
	if err != nil || !strings.HasSuffix(text, "k") {
		return errors.New("not a size")
	}
	*b = thousands(n * 1000)
	return nil
}

func (*thousands) Expected() string { return `a size such as "2k"` }

type item struct {
	Name  string        `yaml:"name"`
	Size  thousands     `yaml:"size"`
	Every time.Duration `yaml:"every"`
	Skip  string        `yaml:"-"`
}

// SetDefaults makes every list item start at 5s.
func (i *item) SetDefaults() { *i = item{Every: 5 * time.Second} }

type doc struct {
	Items []item          `yaml:"items"`
	Extra *item           `yaml:"extra"`
	Tags  map[string]bool `yaml:"tags"`
}

func TestDecodeScalarsDefaultsAndLines(t *testing.T) {
	d := New("d.yml")
	var got doc
	data := "items:\n  - name: a\n    size: 2k\n  - name: b\n    size: 300\n    every: 1s\nextra:\ntags: {x: true}\n"
	if found, err := d.Decode([]byte(data), &got); !found || err != nil {
		t.Fatalf("Decode = %v, %v", found, err)
	}
	want := doc{
		Items: []item{{Name: "a", Size: 2000, Every: 5 * time.Second}, {Name: "b", Size: 300, Every: time.Second}},
		Tags:  map[string]bool{"x": true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
	for key, line := range map[string]int{"items[1].every": 6, "items[1].missing": 4, "extra": 0, "nowhere": 0} {
		if got := d.LineOf(key); got != line {
			t.Errorf("LineOf(%q) = %d, want %d", key, got, line)
		}
	}
	if empty := d.EmptyKeys(); !reflect.DeepEqual(empty, map[string]int{"extra": 7}) {
		t.Errorf("EmptyKeys = %v, want extra at line 7", empty)
	}
	if d.Has("extra") || !d.Has("items[0].size") {
		t.Errorf("Has: extra %v (null, want false), items[0].size %v (want true)", d.Has("extra"), d.Has("items[0].size"))
	}
	if err := d.Errorf("items[0].name", "taken"); err.Error() != "d.yml:2: items[0].name: taken" {
		t.Errorf("Errorf = %q", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for data, want := range map[string]string{
		"items:\n  - size: 2 kilobytes\n": `d.yml:2: items[0].size: expected a size such as "2k", got "2 kilobytes"`,
		"items:\n  - size: {k: 1}\n":      `d.yml:2: items[0].size: expected a size such as "2k", got a mapping`,
		"items:\n  - size: 1e99\n":        `d.yml:2: items[0].size: expected a size such as "2k", got "1e99"`,
		"items:\n  - skip: x\n":           `d.yml:2: items[0]: unknown key "skip"`,
		"tags: {x: yes}\n":                `d.yml:1: tags.x: expected true or false, got "yes"`,
		"tags: {x: true, x: false}\n":     `d.yml:1: tags: duplicate key "x" (first at line 1)`,
		"[1, 2]\n":                        `d.yml:1: expected a mapping, got a list`,
	} {
		var out doc
		_, err := New("d.yml").Decode([]byte(data), &out)
		var yerr *Error
		if !errors.As(err, &yerr) || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", data, err, want)
		}
	}
}

func TestDecodeEmpty(t *testing.T) {
	out := doc{Tags: map[string]bool{"kept": true}}
	found, err := New("d.yml").Decode([]byte("# only a comment\n"), &out)
	if found || err != nil || !out.Tags["kept"] {
		t.Errorf("Decode of a comment = %v, %v, %+v; want false, nil and out untouched", found, err, out)
	}
}

func TestKeys(t *testing.T) {
	if got := Keys(reflect.TypeFor[item]()); !reflect.DeepEqual(got, []string{"name", "size", "every"}) {
		t.Errorf("Keys(item) = %v", got)
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.yml")
	_, err := ReadFile(path)
	if err == nil || err.Error() != path+": cannot read file: no such file or directory" {
		t.Errorf("ReadFile = %v", err)
	}
}

func TestUnsupportedTypePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "uint8") {
			t.Errorf("recovered %v, want a panic naming uint8", r)
		}
	}()
	var out struct {
		N uint8 `yaml:"n"`
	}
	_, _ = New("d.yml").Decode([]byte("n: 1\n"), &out)
}
