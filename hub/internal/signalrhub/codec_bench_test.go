package signalrhub

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
	"github.com/hubprobe/hubprobe/signalr"
)

// The benchmarks of the hub's Echo as a whole are in package hub.

// BenchmarkParseRecord isolates the shared JSON codec's decoding of one
// Echo record, the largest single cost in the hub's per-message work.
func BenchmarkParseRecord(b *testing.B) {
	for _, size := range wiretest.BlobSizes {
		record := wiretest.EchoRecord(size)
		b.Run(fmt.Sprintf("blob=%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(record)))
			for i := 0; i < b.N; i++ {
				if _, err := (signalr.JSONProtocol{}).ParseMessages(record, discardMessage); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// discardMessage is a reader that keeps nothing of what it reads.
func discardMessage(*signalr.Message) error { return nil }

// BenchmarkRoutingField isolates the routing-field peek of SendToConnection
// and SendToGroup, on the payload of BenchmarkParseRecord: the route first,
// as hubprobe's scenarios write it, or last, behind the blob.
func BenchmarkRoutingField(b *testing.B) {
	for _, size := range wiretest.BlobSizes {
		blob := `"payload.Timestamp":1712345678901,"payload.MessageBlob":"` + strings.Repeat("A", size) + `"`
		payloads := map[string]string{
			"first": `{"information.ConnectionId":"x",` + blob + `}`,
			"last":  `{` + blob + `,"information.ConnectionId":"x"}`,
		}
		for _, where := range []string{"first", "last"} {
			p := []byte(payloads[where])
			b.Run(fmt.Sprintf("%s/blob=%d", where, size), func(b *testing.B) {
				b.SetBytes(int64(len(p)))
				b.ReportAllocs()
				for b.Loop() {
					if id, ok := jsonCodec.field(p, connectionIDField); !ok || id != "x" {
						b.Fatalf("field = %q, %v", id, ok)
					}
				}
			})
		}
	}
}
