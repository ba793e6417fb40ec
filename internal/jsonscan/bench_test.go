package jsonscan

import (
	"strings"
	"testing"
)

// benchTexts are a Web PubSub group message with a short payload, as most
// frames are, and a SignalR Invocation carrying a 2 KiB blob.
var benchTexts = map[string]string{
	"frame": `{"type":"message","from":"group","group":"group-0007","fromUserId":"user-0042","sequenceId":123456,` +
		`"dataType":"json","data":{"payload.Run":"7f3a9c1e","payload.MessageBlob":"ABCDEFGHabcdefgh","payload.Timestamp":1767225600123456}}`,
	"record": `{"type":1,"invocationId":"42","target":"Echo","arguments":[{"run":"r-7f3a","seq":1234,"sentAt":1732900000123456789,"data":"` +
		strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 57) + `"}]}`,
}

// BenchmarkSkipValue validates each text in full, the scanner's own share
// of decoding it.
func BenchmarkSkipValue(b *testing.B) {
	for _, name := range []string{"frame", "record"} {
		data := []byte(benchTexts[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				s := New(data, MaxDepth)
				if _, err := s.SkipValue(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
