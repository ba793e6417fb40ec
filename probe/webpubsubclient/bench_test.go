package webpubsubclient

import (
	"context"
	"testing"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// benchPayload is shaped like a scenario's message: a run id, a blob and
// a send timestamp, about 140 bytes of JSON.
var benchPayload = []byte(`{"payload.Run":"7f3a9c1e","payload.MessageBlob":"` +
	`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/ABCDEFGHIJKLMNOPQRSTUVWXYZ",` +
	`"payload.Timestamp":1767225600123456}`)

// BenchmarkEchoRoundTrip sends an event and waits for the service's
// answer as a server message, the upstream echo's round trip. Allocations
// are the whole process's; the test service reuses its buffers, so they
// are mostly the client's.
func BenchmarkEchoRoundTrip(b *testing.B) {
	for _, proto := range []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable} {
		b.Run(proto, func(b *testing.B) {
			c, got := benchConn(b, proto, true)
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(benchPayload)))
			for b.Loop() {
				if err := c.SendEvent(ctx, "echo", webpubsub.DataTypeJSON, benchPayload, 0); err != nil {
					b.Fatal(err)
				}
				<-got
			}
		})
	}
}

// BenchmarkGroupRoundTripWithAck sends to a group the sender is in and
// waits for both the ack and its own message.
func BenchmarkGroupRoundTripWithAck(b *testing.B) {
	c, got := benchConn(b, webpubsub.ProtocolJSON, false)
	ctx := context.Background()
	if err := c.JoinGroup(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchPayload)))
	for b.Loop() {
		if err := c.SendToGroup(ctx, "bench", webpubsub.DataTypeJSON, benchPayload, WaitAck); err != nil {
			b.Fatal(err)
		}
		<-got
	}
}

func benchConn(b *testing.B, proto string, fromServer bool) (*Conn, <-chan struct{}) {
	svc := newTestService(b, newMiniHub().serve)
	got := make(chan struct{}, 1)
	o := svc.options("bench", proto)
	deliver := func(Message) { got <- struct{}{} }
	if fromServer {
		o.OnServerMessage = deliver
	} else {
		o.OnGroupMessage = deliver
	}
	return svc.dial(b, o), got
}
