package config

import (
	"errors"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// Parse decodes and validates a config held in memory. filename is used in
// error messages and to resolve relative access_token_file paths. kinds lists
// the valid scenario kinds; nil skips that check.
func Parse(data []byte, filename string, kinds Kinds) (*Config, error) {
	d := yamldecode.New(filename)
	cfg := &Config{Global: DefaultGlobal}
	if _, err := d.Decode(data, cfg); err != nil {
		return nil, err
	}
	v := &validator{Decoder: d, dir: filepath.Dir(filename), kinds: kinds}
	if err := v.targets(cfg); err != nil {
		return nil, err
	}
	if err := v.scenarios(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// validator fills the defaults that depend on other fields and checks the
// rules that span fields. Its errors (the decoder's Errorf) point at the
// key's line, or at the enclosing item's line when the key was left out.
type validator struct {
	*yamldecode.Decoder
	dir   string
	kinds Kinds
}

// name checks a target or scenario name: it becomes a label value.
func (v *validator) name(item, what, name string, seen map[string]int) error {
	key := keyPath(item, "name")
	switch {
	case name == "":
		return v.Errorf(key, "must not be empty")
	case strings.IndexFunc(name, notNameRune) >= 0:
		return v.Errorf(key, "invalid name %q: use only letters, digits, \"_\", \".\" and \"-\"", name)
	}
	if line, dup := seen[name]; dup {
		return v.Errorf(key, "duplicate %s name %q (first defined at line %d)", what, name, line)
	}
	seen[name] = v.LineOf(key)
	return nil
}

func notNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
}

func (v *validator) intRange(key string, got, lo, hi int, hiName string) error {
	if got >= lo && got <= hi {
		return nil
	}
	return v.Errorf(key, "must be between %d and %s, got %d", lo, hiName, got)
}

func (v *validator) positive(key string, d time.Duration) error {
	if d <= 0 {
		return v.Errorf(key, "must be greater than 0, got %s", d)
	}
	return nil
}

func (v *validator) durationRange(key string, d, lo, hi time.Duration) error {
	if d < lo || d > hi {
		return v.Errorf(key, "must be between %s and %s, got %s", lo, hi, d)
	}
	return nil
}

func (v *validator) notNegative(key string, d time.Duration) error {
	if d < 0 {
		return v.Errorf(key, "must not be negative, got %s", d)
	}
	return nil
}

func (v *validator) oneOf(key, what, got string, valid []string) error {
	switch {
	case got == "" && valid == nil:
		return v.Errorf(key, "must not be empty")
	case valid == nil || slices.Contains(valid, got):
		return nil
	}
	list := strings.Join(slices.Sorted(slices.Values(valid)), ", ")
	if got == "" {
		return v.Errorf(key, "must not be empty (valid: %s)", list)
	}
	return v.Errorf(key, "unknown %s %q (valid: %s)", what, got, list)
}

// firstError runs checks in order and returns the first failure.
func firstError(checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// urlError describes a url.Parse failure without repeating the URL, which
// may carry credentials in its query.
func urlError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// validHeaderName accepts RFC 9110 token characters only.
func validHeaderName(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool {
		return r > '~' || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) < 0
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
