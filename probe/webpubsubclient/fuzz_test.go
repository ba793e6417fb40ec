package webpubsubclient

import (
	"errors"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// FuzzHandleFrame feeds any bytes to the reader's dispatch, on both
// protocols, with two requests waiting for acks. It checks that handling
// never panics, that every failure wraps ErrProtocol or is the service's
// disconnected message, that an ack settles only a waiting request, and
// that a message reaches its handler intact. The connection has no
// socket: it is marked ended first, so the sequence acks it schedules
// never reach one.
func FuzzHandleFrame(f *testing.F) {
	for _, k := range badBytesCases {
		f.Add([]byte(k.frame))
	}
	for _, s := range []string{
		`{"type":"ack","ackId":2,"success":false,"error":{"name":"Forbidden","message":"no"}}`,
		`{"type":"message","from":"group","group":"g","dataType":"binary","data":"AAEC","sequenceId":400}`,
		`{"type":"system","event":"disconnected","message":"Connection count reaches limit"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, proto := range []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable} {
			checkHandle(t, proto, in)
		}
	})
}

func checkHandle(t *testing.T, proto string, in []byte) {
	var got []Message
	keep := func(m Message) { got = append(got, m) }
	c := newConn(nil, &Options{Protocol: proto, OnGroupMessage: keep, OnServerMessage: keep, Settings: clientconn.Settings{Observer: clientconn.NopObserver{}}})
	c.state.End(nil)
	c.seq.start(time.Hour, c.sendSequenceAck)
	defer c.seq.stop()
	done := make(chan error, 2)
	c.lastAckID.Store(2)
	c.acks[1], c.acks[2] = pendingAck{op: "join group", done: done}, pendingAck{op: "send event", done: done}
	err := c.handle(in)
	var closeErr *clientconn.CloseError
	if err != nil && !errors.Is(err, ErrProtocol) && !errors.As(err, &closeErr) {
		t.Fatalf("%s: error %v is neither ErrProtocol nor a CloseError", proto, err)
	}
	frame, decodeErr := webpubsub.Decode(in)
	if decodeErr != nil || err != nil {
		return
	}
	switch frame.Kind {
	case webpubsub.KindAck:
		if len(done) != 1 || len(c.acks) != 1 {
			t.Fatalf("ack %d settled %d requests, %d left", frame.AckID, len(done), len(c.acks))
		}
	case webpubsub.KindGroupMessage, webpubsub.KindServerMessage:
		if len(got) != 1 || got[0].Group != frame.Group || string(got[0].Data) != string(frame.Data) || got[0].DataType != frame.DataType {
			t.Fatalf("delivered %+v for %+v", got, frame)
		}
	}
}
