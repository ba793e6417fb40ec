package webpubsubclient

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// sequenceScript sends server messages with the given sequence ids after
// connected, batch after batch with a pause between them, and reports
// every sequenceAck on acks.
func sequenceScript(batches [][]uint64, acks chan<- uint64) func(s *svcConn) {
	return func(s *svcConn) {
		if s.connected() != nil {
			return
		}
		go func() {
			for _, batch := range batches {
				for _, id := range batch {
					m := webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: webpubsub.DataTypeText, Data: []byte(strconv.FormatUint(id, 10)), SequenceID: id}
					if s.send(&m) != nil {
						return
					}
				}
				time.Sleep(500 * time.Millisecond)
			}
		}()
		for {
			f, err := s.read()
			if err != nil {
				return
			}
			if f.Kind == webpubsub.KindSequenceAck {
				acks <- f.SequenceID
			}
		}
	}
}

// collectAcks returns the sequenceAcks that arrive within d.
func collectAcks(acks <-chan uint64, d time.Duration) []uint64 {
	var got []uint64
	timeout := time.After(d)
	for {
		select {
		case id := <-acks:
			got = append(got, id)
		case <-timeout:
			return got
		}
	}
}

func TestSequenceAckIsCumulativeOncePerInterval(t *testing.T) {
	acks := make(chan uint64, 64)
	svc := newTestService(t, sequenceScript([][]uint64{{1, 2, 3, 4, 5}, {6, 7}}, acks))
	in := newInbox()
	o := svc.options("u", webpubsub.ProtocolJSONReliable)
	o.SequenceAckInterval = 200 * time.Millisecond
	o.OnServerMessage = in.handler
	svc.dial(t, o)
	for want := uint64(1); want <= 7; want++ {
		if m := in.next(t); m.SequenceID != want || string(m.Data) != strconv.FormatUint(want, 10) {
			t.Errorf("message %+v, want sequence %d", m, want)
		}
	}
	if got := fmt.Sprint(collectAcks(acks, 500*time.Millisecond)); got != "[5 7]" {
		t.Errorf("sequenceAcks %s, want [5 7]: one cumulative ack per batch", got)
	}
}

func TestSequenceAckGoesAtOnceWhenManyAreUnacked(t *testing.T) {
	ids := make([]uint64, 301)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	acks := make(chan uint64, 64)
	svc := newTestService(t, sequenceScript([][]uint64{ids}, acks))
	o := svc.options("u", webpubsub.ProtocolJSONReliable)
	o.SequenceAckInterval = time.Hour
	svc.dial(t, o)
	if got := fmt.Sprint(collectAcks(acks, 1500*time.Millisecond)); got != "[301]" {
		t.Errorf("sequenceAcks %s, want [301] long before the hour-long interval", got)
	}
}

func TestRedeliveredSequenceIdsReachTheHandler(t *testing.T) {
	acks := make(chan uint64, 64)
	svc := newTestService(t, sequenceScript([][]uint64{{1, 2, 2, 3, 1}}, acks))
	in := newInbox()
	o := svc.options("u", webpubsub.ProtocolJSONReliable)
	o.SequenceAckInterval = 50 * time.Millisecond
	o.OnServerMessage = in.handler
	svc.dial(t, o)
	var seen []uint64
	for range 5 {
		seen = append(seen, in.next(t).SequenceID)
	}
	// The client delivers what came, so the scenario layer counts the
	// duplicates by payload; it acknowledges the largest id.
	if fmt.Sprint(seen) != "[1 2 2 3 1]" {
		t.Errorf("delivered %v", seen)
	}
	if got := fmt.Sprint(collectAcks(acks, 400*time.Millisecond)); got != "[3]" {
		t.Errorf("sequenceAcks %s, want [3]", got)
	}
}

func TestPlainProtocolSendsNoSequenceAck(t *testing.T) {
	acks := make(chan uint64, 64)
	svc := newTestService(t, sequenceScript([][]uint64{{1, 2}}, acks))
	in := newInbox()
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.SequenceAckInterval = 20 * time.Millisecond
	o.OnServerMessage = in.handler
	svc.dial(t, o)
	// The plain protocol has no sequence ids; a service that sends them
	// anyway is not acknowledged, and the messages carry none.
	for range 2 {
		if m := in.next(t); m.SequenceID != 0 {
			t.Errorf("message %+v carries a sequence id on the plain protocol", m)
		}
	}
	if got := collectAcks(acks, 200*time.Millisecond); len(got) != 0 {
		t.Errorf("sequenceAcks %v on the plain protocol", got)
	}
}
