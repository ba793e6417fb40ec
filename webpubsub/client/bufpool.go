package client

import "sync"

const (
	initialBufSize = 4096
	// maxPooledBuf keeps one huge frame from pinning a huge buffer.
	maxPooledBuf = 64 << 10
)

// bufPool holds the read and encode buffers of all connections, so an idle
// connection holds none.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, initialBufSize)
	return &b
}}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
