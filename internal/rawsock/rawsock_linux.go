//go:build linux

package rawsock

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn is a TCP connection whose reads and writes are raw system calls on
// its non-blocking socket, waited for by the runtime's poller as usual.
type Conn struct {
	*net.TCPConn
	raw syscall.RawConn
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
	return &Conn{TCPConn: tcp, raw: raw}
}

// Read reads what the socket holds, waiting for it when it holds nothing.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.raw.Read(func(fd uintptr) bool {
		n, errno = rawIO(syscall.SYS_READ, fd, p)
		return errno != syscall.EAGAIN
	})
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
	written := 0
	var errno syscall.Errno
	err := c.raw.Write(func(fd uintptr) bool {
		for written < len(p) {
			var n int
			n, errno = rawIO(syscall.SYS_WRITE, fd, p[written:])
			if errno == syscall.EAGAIN {
				return false
			}
			if errno != 0 {
				return true
			}
			written += n
		}
		return true
	})
	switch {
	case err != nil:
		return written, err
	case errno != 0:
		return written, c.opError("write", errno)
	}
	return written, nil
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
