package webpubsubclient

import (
	"testing"
	"time"
)

// The sequenceAck goes out at once only when the largest id runs more than
// sequenceAckBatch ahead of the last one acknowledged; at the batch itself
// it waits for the interval. An id below the largest never lowers it.
func TestSequenceAckAtOnceOnlyPastTheBatch(t *testing.T) {
	sent := make(chan struct{}, 4)
	var s sequence
	s.start(time.Hour, func() { sent <- struct{}{} })
	defer s.stop()
	s.acked.Store(100)
	s.received(100 + sequenceAckBatch)
	s.received(7)
	if got := s.largest.Load(); got != 100+sequenceAckBatch {
		t.Fatalf("largest = %d after ids %d and 7, want %d", got, 100+sequenceAckBatch, 100+sequenceAckBatch)
	}
	select {
	case <-sent:
		t.Fatalf("an ack went out at once with the largest id %d ahead, the batch itself", sequenceAckBatch)
	case <-time.After(50 * time.Millisecond):
	}
	if !s.dirty.Load() || s.urgent.Load() {
		t.Errorf("dirty %v, urgent %v: want an ack due at the interval, none at once", s.dirty.Load(), s.urgent.Load())
	}
	s.received(101 + sequenceAckBatch)
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		t.Fatalf("no ack went out with the largest id %d ahead, past the batch", sequenceAckBatch+1)
	}
}
