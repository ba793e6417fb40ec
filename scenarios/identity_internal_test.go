package scenarios

import (
	"runtime"
	"testing"
)

// Every verdict of the identity record, for one receiver's own stream and
// for a stream from another sender, with the counts they add up to.
func TestIdentityVerdicts(t *testing.T) {
	ids := newIdentities(3)
	own := [4]uint64{}
	for i := range own {
		own[i] = ids.assign(1)
	}
	other := ids.assign(2)
	steps := []struct {
		receiver int
		id, pos  uint64
		want     deliveryVerdict
	}{
		{1, own[1], 1, deliveryFresh},
		{1, own[0], 0, deliveryReordered}, // behind seq 1 of the same sender
		{1, own[0], 0, deliveryDuplicate},
		{1, own[3], 3, deliveryFresh},
		{1, own[2], 2, deliveryReordered},
		{1, own[3], 3, deliveryDuplicate},
		{0, own[0], 0, deliveryFresh}, // another receiver keeps its own record
		{1, other, 0, deliveryFresh},  // another sender's stream to receiver 1
		{1, other, 0, deliveryDuplicate},
		{1, messageID(1, 4), 4, deliveryUnknown}, // never given out
		{1, messageID(3, 0), 0, deliveryUnknown}, // no such sender
		{3, own[0], 0, deliveryUnknown},          // no such receiver
	}
	for i, s := range steps {
		if got := ids.see(s.receiver, s.id, s.pos); got != s.want {
			t.Errorf("step %d: see(%d, %d, %d) = %d, want %d", i, s.receiver, s.id, s.pos, got, s.want)
		}
	}
	failed := ids.assign(2)
	ids.unsent(failed)
	if got := ids.see(2, failed, 1); got != deliveryUnknown {
		t.Errorf("a message whose send failed was counted: verdict %d", got)
	}
}

// The unit-10 echo profile, 10,000 connections and 600,000 messages in a
// run, keeps its identity record in a few MiB: a header per receiver and a
// bit per expected delivery.
func TestIdentityMemoryBoundedAtUnit10(t *testing.T) {
	const clients, perSender = 10000, 60
	before := heapInUse()
	ids := newIdentities(clients)
	for seq := range perSender {
		for c := range clients {
			if v := ids.see(c, ids.assign(c), uint64(seq)); v != deliveryFresh {
				t.Fatalf("client %d seq %d: verdict %d", c, seq, v)
			}
		}
	}
	grown := heapInUse() - before
	if grown > 4<<20 {
		t.Errorf("identity record of %d messages took %d KiB, want under 4 MiB", clients*perSender, grown>>10)
	}
	runtime.KeepAlive(ids)
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
