package clientconn

import "sync"

const (
	initialBufSize = 4096
	// MaxPooledBuf keeps one huge message from pinning a huge buffer.
	MaxPooledBuf = 64 << 10
	// WebSocketBufferSize keeps an idle connection small: gorilla holds one
	// read buffer of this size; write buffers come from
	// WebSocketWriteBufferPool, which serves this size only.
	WebSocketBufferSize = 4096
)

// bufPool holds the encode and read buffers of every connection of both
// clients, so an idle connection holds none.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, initialBufSize)
	return &b
}}

// GetBuf lends an empty buffer from the pool.
func GetBuf() *[]byte { return bufPool.Get().(*[]byte) }

// PutBuf gives b back, unless it grew beyond MaxPooledBuf.
func PutBuf(b *[]byte) {
	if cap(*b) > MaxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// WebSocketWriteBufferPool lends gorilla its frame buffers only while a
// frame is being written. One pool serves every dialer, as gorilla asks of
// dialers that share a WriteBufferSize (WebSocketBufferSize).
var WebSocketWriteBufferPool sync.Pool
