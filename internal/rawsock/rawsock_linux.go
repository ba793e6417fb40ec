//go:build linux

package rawsock

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Conn is a TCP connection whose reads and writes are raw system calls on
// its non-blocking socket, waited for by the runtime's poller as usual.
type Conn struct {
	*net.TCPConn
	raw syscall.RawConn
	// rd and wr hold one direction's call while the poller runs it: their
	// functions are bound once, so a read or a write allocates nothing
	// (a closure per call was three allocations of every message's path).
	rd, wr call
}

// call is one direction's read or write in progress. Its mutex keeps
// concurrent callers in turn, as a net.Conn's own lock would.
type call struct {
	mu    sync.Mutex
	run   func(fd uintptr) bool
	p     []byte
	n     int
	errno syscall.Errno
}

// Wrap returns c with raw reads and writes when it is a TCP connection,
// and c itself otherwise.
func Wrap(c net.Conn) net.Conn {
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return c
	}
	rc := &Conn{TCPConn: tcp, raw: raw}
	rc.rd.run, rc.wr.run = rc.rd.readOnce, rc.wr.writeAll
	return rc
}

// Read reads what the socket holds, waiting for it when it holds nothing.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, errno, err := c.rd.through(c.raw.Read, p)
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting for room in the socket's buffer.
func (c *Conn) Write(p []byte) (int, error) {
	written, errno, err := c.wr.through(c.raw.Write, p)
	switch {
	case err != nil:
		return written, err
	case errno != 0:
		return written, c.opError("write", errno)
	}
	return written, nil
}

// through makes the call on p, run by poll (the RawConn's Read or Write).
func (k *call) through(poll func(func(fd uintptr) bool) error, p []byte) (int, syscall.Errno, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.p, k.n, k.errno = p, 0, 0
	err := poll(k.run)
	n, errno := k.n, k.errno
	k.p = nil
	return n, errno, err
}

// readOnce reads once into p; false (wait for the poller) while the
// socket holds nothing.
func (k *call) readOnce(fd uintptr) bool {
	k.n, k.errno = rawIO(syscall.SYS_READ, fd, k.p)
	return k.errno != syscall.EAGAIN
}

// writeAll writes what is left of p; false (wait for the poller) when the
// socket's buffer is full.
func (k *call) writeAll(fd uintptr) bool {
	for k.n < len(k.p) {
		n, errno := rawIO(syscall.SYS_WRITE, fd, k.p[k.n:])
		if errno == syscall.EAGAIN {
			return false
		}
		if errno != 0 {
			k.errno = errno
			return true
		}
		k.n += n
	}
	return true
}

// rawIO is one read or write of p on fd; EINTR is tried again.
func rawIO(call uintptr, fd uintptr, p []byte) (int, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall(call, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != syscall.EINTR {
			return int(n), errno
		}
	}
}

// opError is the error the net package would give: "read tcp A->B: read:
// connection reset by peer".
func (c *Conn) opError(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}
