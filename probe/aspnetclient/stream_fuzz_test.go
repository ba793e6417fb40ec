package aspnetclient

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// fuzzMaxMessage is the message size limit the fuzzed streams read under.
const fuzzMaxMessage = 512

// FuzzStreamMessages feeds bytes from the network to the client's stream
// reader, as the body of a Server-Sent Events (sse true) or Forever Frame
// response: the framing the codec's own fuzz targets do not reach, read
// in the client's buffer with its size limit. Every message it hands out
// must fit that limit, and the stream must end in an error (the server
// ended it, or bad bytes) after at most one message per byte, never a
// panic or a loop.
func FuzzStreamMessages(f *testing.F) {
	f.Add(true, uint8(6), aspnet.AppendSSEData([]byte(aspnet.SSEInitialized), []byte(`{"C":"1","S":1,"M":[]}`)))
	f.Add(false, uint8(199), aspnet.AppendForeverFrameScript(aspnet.AppendForeverFramePreamble(nil, 1), []byte(`{"C":"1","M":[{"H":"h","M":"m","A":[]}]}`)))
	f.Add(true, uint8(199), aspnet.AppendSSEData(nil, bytes.Repeat([]byte("x"), fuzzMaxMessage+78)))
	f.Fuzz(func(t *testing.T, sse bool, piece uint8, body []byte) {
		s := newFuzzStream(sse, 1+int(piece), body)
		for range len(body) + 1 {
			msg, err := s.next()
			if err != nil {
				if !errors.Is(err, errDropped) && !errors.Is(err, ErrProtocol) {
					t.Fatalf("the stream ended with %v, neither dropped nor a protocol error", err)
				}
				return
			}
			if len(msg) > fuzzMaxMessage {
				t.Fatalf("a %d-byte message passed the %d-byte limit", len(msg), fuzzMaxMessage)
			}
			var frame aspnet.Frame
			_ = aspnet.DecodeFrame(msg, &frame)
		}
		t.Fatalf("more messages than the %d bytes of the stream", len(body))
	})
}

// newFuzzStream is a stream transport reading body in pieces of at most
// piece bytes, as a network delivers it, so messages straddle reads.
func newFuzzStream(sse bool, piece int, body []byte) *streamTransport {
	kind := TransportForeverFrame
	if sse {
		kind = TransportSSE
	}
	c := &Conn{o: &Options{Settings: clientconn.Settings{Observer: clientconn.NopObserver{}}}}
	return &streamTransport{kind: kind, poster: poster{c: c}, max: fuzzMaxMessage,
		body: io.NopCloser(&pieces{r: bytes.NewReader(body), size: piece})}
}

type pieces struct {
	r    *bytes.Reader
	size int
}

func (p *pieces) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.size)]) }
