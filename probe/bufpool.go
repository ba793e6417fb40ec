package probe

import "sync"

const (
	initialBufSize = 4096
	// maxPooledBuf keeps one huge message from pinning a huge buffer.
	maxPooledBuf = 64 << 10
)

// bufPool holds encode and read buffers shared by all connections, so an
// idle connection holds none.
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

// wsWriteBufferPool lends gorilla its frame buffers only while a frame is
// being written.
var wsWriteBufferPool sync.Pool
