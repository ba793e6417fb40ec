package clientconn

import (
	"testing"
	"time"
)

func TestOrDefault(t *testing.T) {
	if got := OrDefault(0, 15*time.Second); got != 15*time.Second {
		t.Errorf("zero: %s", got)
	}
	if got := OrDefault(-time.Second, 15*time.Second); got != 15*time.Second {
		t.Errorf("negative: %s", got)
	}
	if got := OrDefault(time.Second, 15*time.Second); got != time.Second {
		t.Errorf("set: %s", got)
	}
	if got := OrDefault(int64(64), 1<<20); got != 64 {
		t.Errorf("size: %d", got)
	}
}

func TestPutBufKeepsHugeBuffersOut(t *testing.T) {
	huge := make([]byte, 0, 2*MaxPooledBuf)
	PutBuf(&huge)
	for range 100 {
		bp := GetBuf()
		if bp == &huge || cap(*bp) > MaxPooledBuf {
			t.Fatalf("the pool lent a %d-byte buffer", cap(*bp))
		}
		if len(*bp) != 0 {
			t.Fatalf("the pool lent a buffer holding %d bytes", len(*bp))
		}
		*bp = append(*bp, "leftover"...)
		PutBuf(bp)
	}
}
