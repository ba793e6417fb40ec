package e2e

import "syscall"

// childAttributes puts a child in its own session and has the kernel kill it
// if the test binary dies without running its cleanups (for example on a
// go test -timeout panic). Its own session also gives it its own scheduler
// autogroup, as a container would: hubprobe's send lag, which holds the
// latency alerts back, then reflects hubprobe rather than the CPU appetite
// of Prometheus and of the tests running next to it.
func childAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
