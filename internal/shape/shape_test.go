// Package shape_test holds the import rules of hubprobe's layout to what
// docs/architecture.md says of them, by asking go list.
package shape_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/hubprobe/hubprobe/"

type goPackage struct {
	ImportPath, Dir                    string
	GoFiles                            []string
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

// commandLines is the most product code cmd/hubprobe may hold: main parses
// flags and wires packages, and what grows past this belongs to one of them.
const commandLines = 650

func TestCommandOnlyWires(t *testing.T) {
	for _, p := range packages(t) {
		if p.ImportPath != module+"cmd/hubprobe" {
			continue
		}
		lines := 0
		for _, name := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			lines += strings.Count(string(b), "\n")
		}
		if lines == 0 || lines >= commandLines {
			t.Errorf("cmd/hubprobe holds %d lines of product code in %d files, want fewer than %d", lines, len(p.GoFiles), commandLines)
		}
		return
	}
	t.Fatal("go list did not list cmd/hubprobe")
}
