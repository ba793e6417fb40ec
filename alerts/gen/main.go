// Command gen writes hubprobe's rule files from the rules in package alerts:
// alerts/hubprobe-rules.yml, its copy in the Helm chart and
// deploy/base/prometheusrule.yaml.
//
//	go run ./alerts/gen            # from the repository root
//	go generate ./alerts/
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hubprobe/hubprobe/alerts"
)

func main() {
	root := flag.String("root", ".", "repository root to write the files under")
	flag.Parse()
	if err := write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "alerts/gen:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	files, err := alerts.Files(alerts.DefaultConfig)
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
