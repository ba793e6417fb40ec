// Package shape_test holds the import rules of hubprobe's layout to what
// docs/architecture.md says of them, by asking go list.
package shape_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/hubprobe/hubprobe/"

type goPackage struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// packages lists every package of the module with what it imports.
func packages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var list []goPackage
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		list = append(list, p)
	}
	return list
}

func (p goPackage) all() []string {
	return append(append(append([]string{}, p.Imports...), p.TestImports...), p.XTestImports...)
}

func under(path, dir string) bool {
	return path == module+dir || strings.HasPrefix(path, module+dir+"/")
}

// The layout's rules: test rigs stay out of the product, the hub knows no
// configuration, no client knows Azure, and the scenario engine, its tests
// included, knows nothing of the exporter.
func TestImportRules(t *testing.T) {
	for _, p := range packages(t) {
		for _, imp := range p.Imports {
			if strings.HasSuffix(imp, "test") && strings.HasPrefix(imp, module) && !strings.HasSuffix(p.ImportPath, "test") {
				t.Errorf("%s, product code, imports the test rig %s", p.ImportPath, imp)
			}
		}
		for _, imp := range p.all() {
			switch {
			case under(p.ImportPath, "hub") && imp == module+"config":
				t.Errorf("%s imports config", p.ImportPath)
			case under(p.ImportPath, "probe") && imp == module+"azure":
				t.Errorf("%s, a client, imports azure", p.ImportPath)
			case under(p.ImportPath, "scenarios") && imp == module+"exporter":
				t.Errorf("%s imports exporter", p.ImportPath)
			}
		}
	}
}
