package aspnethub

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// BatchTest is hubprobe's own method beside Signalrbench's, outside the
// benchmark's contract: BatchTest(count, payload) calls the caller's
// Measure count times in one invocation, Measure(i, payload) for
// i = 1 … count-1 and Measure("Last", payload) last, marked as the last
// record was in the 2013 blog post that pushed 1,000 records to a client
// with its hub's BatchTest() to compare SignalR 2.0's transports
// (tools/classictransports repeats it). A batch is at most the
// connection's message buffer, which it must not overrun before the
// client reads it.
const (
	BatchTestMethod = "BatchTest"
	// BatchTestLast is the first argument of a batch's last Measure.
	BatchTestLast = `"Last"`
)

func (h *Hub) batchTest(c *conn, a []json.RawMessage) error {
	var n int
	if json.Unmarshal(a[0], &n) != nil || n < 1 || n > replayLimit {
		return answer(fmt.Sprintf("The count must be a whole number from 1 to %d.", replayLimit))
	}
	var index []byte
	for i := 1; i < n; i++ {
		index = strconv.AppendInt(index[:0], int64(i), 10)
		c.enqueue(measure([]json.RawMessage{index, a[1]}))
	}
	c.enqueue(measure([]json.RawMessage{json.RawMessage(BatchTestLast), a[1]}))
	return nil
}
