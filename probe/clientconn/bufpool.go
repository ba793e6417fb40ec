package clientconn

import "sync"

const (
	initialBufSize = 4096
	// MaxPooledBuf keeps one huge message from pinning a huge buffer.
	MaxPooledBuf = 64 << 10
	// WebSocketBufferSize is the size of the WebSocket write buffers, which
	// come from WebSocketWriteBufferPool (it serves this size only) while a
	// frame is written.
	WebSocketBufferSize = 4096
	// WebSocketReadBufferSize is the read buffer gorilla holds for the whole
	// life of every connection: the allocator's size class that takes a
	// whole message of the default 2,048-byte payload in one read, with
	// room for longer group names and ids (the reference hub's are 2,213 to
	// 2,299 bytes with their envelope, on the Core and the classic wire).
	// A larger frame costs about the reads it costs with 4,096 bytes:
	// gorilla reads the rest of a frame straight into the connection's own
	// buffer.
	WebSocketReadBufferSize = 2688
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
