package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// testVersion is the version the test binary is built with.
const testVersion = "0.0.0-test"

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// hubprobeBinary builds this command once per test run, with testVersion
// set as a release build sets its version, for tests of the real process.
func hubprobeBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "hubprobe-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "hubprobe")
		cmd := exec.Command("go", "build", "-ldflags=-X main.version="+testVersion, "-o", built.bin, ".")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		if err := os.RemoveAll(built.dir); err != nil {
			fmt.Fprintln(os.Stderr, "removing the test binary:", err)
		}
	}
	os.Exit(code)
}
