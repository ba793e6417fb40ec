package ledger

import (
	"runtime"
	"testing"
)

// Every verdict of the identity record, for one receiver's own stream and
// for a stream from another sender, with the counts they add up to.
func TestIdentityVerdicts(t *testing.T) {
	ids := New(3)
	own := [4]uint64{}
	for i := range own {
		own[i] = ids.Assign(1)
	}
	other := ids.Assign(2)
	steps := []struct {
		receiver int
		id, pos  uint64
		want     Verdict
	}{
		{1, own[1], 1, Fresh},
		{1, own[0], 0, Reordered}, // behind seq 1 of the same sender
		{1, own[0], 0, Duplicate},
		{1, own[3], 3, Fresh},
		{1, own[2], 2, Reordered},
		{1, own[3], 3, Duplicate},
		{0, own[0], 0, Fresh}, // another receiver keeps its own record
		{1, other, 0, Fresh},  // another sender's stream to receiver 1
		{1, other, 0, Duplicate},
		{1, MessageID(1, 4), 4, Unknown}, // never given out
		{1, MessageID(3, 0), 0, Unknown}, // no such sender
		{3, own[0], 0, Unknown},          // no such receiver
	}
	for i, s := range steps {
		if got := ids.See(s.receiver, s.id, s.pos); got != s.want {
			t.Errorf("step %d: See(%d, %d, %d) = %d, want %d", i, s.receiver, s.id, s.pos, got, s.want)
		}
	}
	failed := ids.Assign(2)
	ids.Unsent(failed)
	if got := ids.See(2, failed, 1); got != Unknown {
		t.Errorf("a message whose send failed was counted: verdict %d", got)
	}
}

// The unit-10 echo profile, 10,000 connections and 600,000 messages in a
// run, keeps its identity record in a few MiB: a header per receiver and a
// bit per expected delivery.
func TestIdentityMemoryBoundedAtUnit10(t *testing.T) {
	const clients, perSender = 10000, 60
	before := heapInUse()
	ids := New(clients)
	for seq := range perSender {
		for c := range clients {
			if v := ids.See(c, ids.Assign(c), uint64(seq)); v != Fresh {
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

// Seen answers from the receiver's record without changing it.
func TestSeen(t *testing.T) {
	ids := New(2)
	a, b := ids.Assign(0), ids.Assign(0)
	ids.See(0, a, 0)
	ids.See(1, b, 1)
	for _, c := range []struct {
		receiver int
		id, pos  uint64
		want     bool
	}{
		{0, a, 0, true}, {0, b, 1, false}, {1, b, 1, true}, {1, a, 0, false}, {2, a, 0, false},
	} {
		if got := ids.Seen(c.receiver, c.id, c.pos); got != c.want {
			t.Errorf("Seen(%d, %d, %d) = %v, want %v", c.receiver, c.id, c.pos, got, c.want)
		}
	}
	if got := ids.See(0, a, 0); got != Duplicate {
		t.Errorf("See after Seen = %d, want Duplicate: Seen must not record", got)
	}
}
