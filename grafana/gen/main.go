// Command gen writes hubprobe's dashboards from the code in package grafana:
// grafana/dashboards/*.json, their copies in the Helm chart and
// deploy/base/grafana-dashboards.yaml.
//
//	go run ./grafana/gen            # from the repository root
//	go generate ./grafana/
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hubprobe/hubprobe/grafana"
)

func main() {
	root := flag.String("root", ".", "repository root to write the files under")
	flag.Parse()
	if err := write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "grafana/gen:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	files, err := grafana.Files()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, p), files[p], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", p)
	}
	return nil
}
