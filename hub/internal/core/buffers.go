package core

import "sync"

// readBufSize is a connection's input buffer, borrowed from a pool only
// while a message is being read.
const readBufSize = 4096

var readBufPool = sync.Pool{New: func() any { return new([readBufSize]byte) }}

// ReadBuffer borrows an empty input buffer.
func ReadBuffer() []byte { return readBufPool.Get().(*[readBufSize]byte)[:0] }

// ReleaseReadBuffer returns a buffer ReadBuffer lent, unless it was grown
// (then it is left to the collector); the caller drops its slice.
func ReleaseReadBuffer(b []byte) {
	if cap(b) == readBufSize {
		readBufPool.Put((*[readBufSize]byte)(b[:readBufSize]))
	}
}
