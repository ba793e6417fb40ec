//go:build !linux

package rawsock

import "net"

// Wrap returns c unchanged: raw reads and writes are Linux's only.
func Wrap(c net.Conn) net.Conn { return c }
