package config

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// Every key of the schema is described in CONFIGURATION.md.
func TestConfigurationDocCoversEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[Config](), reflect.TypeFor[Global](), reflect.TypeFor[Target](),
		reflect.TypeFor[EmbeddedHub](), reflect.TypeFor[Scenario](), reflect.TypeFor[Profile](),
		reflect.TypeFor[Tier](), reflect.TypeFor[CapacitySearch](), reflect.TypeFor[AzureMonitor](), reflect.TypeFor[Held](), reflect.TypeFor[SLO](),
	} {
		for _, key := range yamldecode.Keys(typ) {
			if !strings.Contains(string(doc), key+":") {
				t.Errorf("CONFIGURATION.md does not describe %s.%s (%q)", typ.Name(), key, key+":")
			}
		}
	}
}
