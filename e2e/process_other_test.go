//go:build !linux

package e2e

import "syscall"

// childAttributes: outside Linux a child that outlives a crashed test binary
// is left to the operating system; t.Cleanup stops it otherwise.
func childAttributes() *syscall.SysProcAttr { return nil }
