// Package rawsock gives a TCP connection reads and writes that are raw
// system calls on its non-blocking socket, still waited for by the Go
// runtime's network poller and still bound by the connection's deadlines.
//
// Why: a net.Conn's Read and Write enter the scheduler's system-call path,
// and when every processor of the process is idle, as a probe at a
// canary's rates is between messages, entering that path wakes the
// runtime's monitor thread (sysmon) from its deep sleep, which then polls
// at 20 µs intervals until the process is idle again. At 1,000
// connections sending once a second that was about one wake-up of the
// monitor per message, half of all the probe's voluntary context
// switches. A read or write of a non-blocking socket never blocks, so it
// does not need that path: this package skips it. docs/performance.md has
// the measurements.
//
// The probe's WebSocket dialer and its pooled HTTP client (Server-Sent
// Events, long polling, Forever Frame), the hub's listener, its Web PubSub
// upstream client and the event handler's listener use it. On other
// systems, and for connections that are not TCP, Wrap returns the
// connection unchanged; TLS runs over the wrapped TCP connection beneath
// it.
package rawsock
