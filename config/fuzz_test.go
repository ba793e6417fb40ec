package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzParse checks that no input makes Parse panic, that every failure is a
// *Error, and that every accepted config prints to YAML that parses back to
// the same config.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yml")
	examples, _ := filepath.Glob("../examples/*.yml")
	for _, path := range append(seeds, examples...) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(DefaultYAML)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "testdata/fuzz.yml", testKinds)
		if err != nil {
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("error %T %v is not a *config.Error", err, err)
			}
			return
		}
		if hasSecrets(c) {
			return // printed secrets are masked, so they cannot round-trip
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out, "printed.yml", testKinds)
		if err != nil {
			t.Fatalf("accepted config prints as\n%s\nwhich fails: %v", out, err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("round trip changed the config\nbefore: %#v\nafter:  %#v", c, again)
		}
	})
}

func hasSecrets(c *Config) bool {
	for _, t := range c.Targets {
		if t.AccessToken != "" || t.ConnectionString != "" || t.EmbeddedHub.AccessKey != "" {
			return true
		}
	}
	return false
}
