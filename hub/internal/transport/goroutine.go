package transport

// stackFloor is how much stack a WebSocket connection's goroutine keeps in
// use beneath its serve loop. Such a goroutine parks, waiting for the next
// frame, with little of its stack in use, and the GC halves every stack
// found less than a quarter used; the next message then grows it back. At
// 10,000 connections that is ten thousand stack copies after every GC
// cycle, and the hub's p99 latency rose from about 40 ms to 150–250 ms
// (47 ms with the runtime's stack shrinking turned off). A kilobyte
// beneath keeps a parked connection's 8 KiB stack a quarter used.
const stackFloor = 1024

// Serve runs serve on a goroutine of its own, beneath stackFloor bytes of
// stack, so that the GC does not shrink the stack between messages.
func Serve(serve func()) { go serveAboveFloor(serve) }

//go:noinline
func serveAboveFloor(serve func()) {
	var floor [stackFloor]byte
	serve()
	holdFloor(floor[:])
}

// holdFloor keeps the floor a live local of serveAboveFloor's frame.
//
//go:noinline
func holdFloor(b []byte) { _ = b[len(b)-1] }
