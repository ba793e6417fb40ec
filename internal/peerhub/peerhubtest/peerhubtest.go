// Package peerhubtest starts the third-party benchmark hub (package
// peerhub) for a test. No product code imports it.
package peerhubtest

import (
	"testing"

	"github.com/hubprobe/hubprobe/internal/peerhub"
)

// Start starts a server that closes when the test ends.
func Start(t testing.TB) *peerhub.Server {
	t.Helper()
	s, err := peerhub.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
