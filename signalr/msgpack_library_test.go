package signalr

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The MessagePack codec and its JSON transcoder are hand-written. The
// benchmarks here keep the reason on record: they run the same 2 KiB
// Invocation through them and through github.com/vmihailenco/msgpack/v5,
// a well-kept general-purpose library, in the two ways a codec built on it
// could go:
//
//   - typed: the message and its payload as Go structs, the library's best
//     case. hubprobe cannot take this route, since its values are JSON text
//     (scenarios and the hub never see MessagePack), but it shows what the
//     library costs at its fastest.
//   - via interface values: the route hubprobe's Message would need, each
//     argument decoded from JSON into interface values and encoded again
//     (and back the other way).
//
// docs/performance.md gives the figures:
//
//	go test ./signalr -run '^$' -bench MessagePackVsLibrary -benchmem -count=5

// libPayload is mpBenchmarkInvocation's payload as a Go struct.
type libPayload struct {
	Run       string `msgpack:"payload.Run"`
	Blob      string `msgpack:"payload.MessageBlob"`
	Timestamp int64  `msgpack:"payload.Timestamp"`
}

// libInvocation is the Invocation array with its arguments left encoded,
// so that each can be read into its own type.
type libInvocation struct {
	_msgpack     struct{} `msgpack:",as_array"` //nolint:unused // msgpack reads its tag: the struct is an array on the wire
	Type         int
	Headers      map[string]string
	InvocationID string
	Target       string
	Arguments    []msgpack.RawMessage
	StreamIDs    []string
}

// libTypedMessage is mpBenchmarkInvocation as Go values.
func libTypedMessage(tb testing.TB) (connID string, payload libPayload) {
	m := mpBenchmarkInvocation()
	if json.Unmarshal(m.Arguments[0], &connID) != nil {
		tb.Fatal("the benchmark's first argument is not a string")
	}
	var p map[string]any
	if err := json.Unmarshal(m.Arguments[1], &p); err != nil {
		tb.Fatal(err)
	}
	run, _ := p["payload.Run"].(string)
	blob, _ := p["payload.MessageBlob"].(string)
	ts, _ := p["payload.Timestamp"].(float64)
	return connID, libPayload{Run: run, Blob: blob, Timestamp: int64(ts)}
}

// libFrame puts the VarInt length prefix in front of a library-encoded body.
func libFrame(dst, body []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(body)))
	return append(dst, body...)
}

func libBody(frame []byte) ([]byte, error) {
	size, n := binary.Uvarint(frame)
	if n <= 0 || uint64(len(frame)-n) != size {
		return nil, errors.New("bad length prefix")
	}
	return frame[n:], nil
}

func libEncodeTyped(dst []byte, id, connID string, p *libPayload) ([]byte, error) {
	body, err := msgpack.Marshal([]any{int(InvocationType), map[string]string{}, id, "Echo", []any{connID, p}, []string{}})
	return libFrame(dst, body), err
}

func libDecodeTyped(frame []byte) (connID string, p libPayload, err error) {
	body, err := libBody(frame)
	if err != nil {
		return "", p, err
	}
	var inv libInvocation
	if err := msgpack.Unmarshal(body, &inv); err != nil {
		return "", p, err
	}
	if len(inv.Arguments) != 2 {
		return "", p, fmt.Errorf("%d arguments", len(inv.Arguments))
	}
	if err := msgpack.Unmarshal(inv.Arguments[0], &connID); err != nil {
		return "", p, err
	}
	err = msgpack.Unmarshal(inv.Arguments[1], &p) // fills p before it is returned
	return connID, p, err
}

// libJSONToMsgpack and libMsgpackToJSON transcode one value through
// interface values, as a library-based codec would.
func libJSONToMsgpack(src []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	return msgpack.Marshal(v)
}

func libMsgpackToJSON(src []byte) (json.RawMessage, error) {
	var v any
	if err := msgpack.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// libEncodeMessage encodes an Invocation of JSON-text arguments through
// interface values.
func libEncodeMessage(dst []byte, m *Message) ([]byte, error) {
	args := make([]any, len(m.Arguments))
	for i, a := range m.Arguments {
		if err := json.Unmarshal(a, &args[i]); err != nil {
			return dst, err
		}
	}
	body, err := msgpack.Marshal([]any{int(m.Type), map[string]string{}, m.InvocationID, m.Target, args, []string{}})
	return libFrame(dst, body), err
}

// libDecodeMessage decodes an Invocation into a Message of JSON-text
// arguments through interface values.
func libDecodeMessage(frame []byte) (Message, error) {
	body, err := libBody(frame)
	if err != nil {
		return Message{}, err
	}
	var inv struct {
		_msgpack     struct{} `msgpack:",as_array"`
		Type         int
		Headers      map[string]string
		InvocationID string
		Target       string
		Arguments    []any
		StreamIDs    []string
	}
	if err := msgpack.Unmarshal(body, &inv); err != nil {
		return Message{}, err
	}
	m := Message{Type: MessageType(inv.Type), InvocationID: inv.InvocationID, Target: inv.Target, Arguments: make([]json.RawMessage, len(inv.Arguments))}
	for i, a := range inv.Arguments {
		if m.Arguments[i], err = json.Marshal(a); err != nil {
			return Message{}, err
		}
	}
	return m, nil
}

// jsonValuesEqual compares two JSON texts as values.
func jsonValuesEqual(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%.80s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%.80s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("value %.80s, want %.80s", got, want)
	}
}

// TestLibraryRoutesAgree checks that the benchmark compares like with like:
// each library route writes what hubprobe's codec reads back as the same
// message, and reads what hubprobe's codec writes.
func TestLibraryRoutesAgree(t *testing.T) {
	want := mpBenchmarkInvocation()
	ours := mpEncode(t, want)
	viaAny, err := libEncodeMessage(nil, &want)
	if err != nil {
		t.Fatal(err)
	}
	connID, p := libTypedMessage(t)
	typed, err := libEncodeTyped(nil, want.InvocationID, connID, &p)
	if err != nil {
		t.Fatal(err)
	}
	for name, frame := range map[string][]byte{"via interface values": viaAny, "typed": typed} {
		got := mpParseAll(t, frame)
		if len(got) != 1 || got[0].Target != want.Target || got[0].InvocationID != want.InvocationID || len(got[0].Arguments) != 2 {
			t.Fatalf("%s: hubprobe read %+v", name, got)
		}
		for i := range want.Arguments {
			jsonValuesEqual(t, got[0].Arguments[i], want.Arguments[i])
		}
	}
	back, err := libDecodeMessage(ours)
	if err != nil || back.Target != want.Target || back.InvocationID != want.InvocationID || len(back.Arguments) != 2 {
		t.Fatalf("library read %+v, %v", back, err)
	}
	for i := range want.Arguments {
		jsonValuesEqual(t, back.Arguments[i], want.Arguments[i])
	}
	if gotID, gotP, err := libDecodeTyped(ours); err != nil || gotID != connID || gotP != p {
		t.Errorf("library read typed %q %+v, %v", gotID, gotP, err)
	}
}

// TestLibraryTranscodingAgrees checks the same for one value transcoded
// on its own, both ways.
func TestLibraryTranscodingAgrees(t *testing.T) {
	payload := mpBenchmarkInvocation().Arguments[1]
	ours, err := appendMsgpackFromJSON(nil, payload)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := libJSONToMsgpack(payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, mp := range [][]byte{ours, theirs} {
		back, err := mpToJSON(mp)
		if err != nil {
			t.Fatal(err)
		}
		jsonValuesEqual(t, []byte(back), payload)
		libBack, err := libMsgpackToJSON(mp)
		if err != nil {
			t.Fatal(err)
		}
		jsonValuesEqual(t, libBack, payload)
	}
}

func BenchmarkMessagePackVsLibrary(b *testing.B) {
	m := mpBenchmarkInvocation()
	connID, p := libTypedMessage(b)
	frame := mpEncode(b, m)
	b.Run("encode/hubprobe", func(b *testing.B) {
		benchmarkEncode(b, func(dst []byte) ([]byte, error) { return MessagePackProtocol{}.AppendMessage(dst, &m) })
	})
	b.Run("encode/library-typed", func(b *testing.B) {
		benchmarkEncode(b, func(dst []byte) ([]byte, error) { return libEncodeTyped(dst, m.InvocationID, connID, &p) })
	})
	b.Run("encode/library-via-interface", func(b *testing.B) {
		benchmarkEncode(b, func(dst []byte) ([]byte, error) { return libEncodeMessage(dst, &m) })
	})
	b.Run("decode/hubprobe", func(b *testing.B) {
		benchmarkDecode(b, frame, func() error {
			_, err := MessagePackProtocol{}.ParseMessages(frame, func(*Message) error { return nil })
			return err
		})
	})
	b.Run("decode/library-typed", func(b *testing.B) {
		benchmarkDecode(b, frame, func() error { _, _, err := libDecodeTyped(frame); return err })
	})
	b.Run("decode/library-via-interface", func(b *testing.B) {
		benchmarkDecode(b, frame, func() error { _, err := libDecodeMessage(frame); return err })
	})
	benchmarkTranscoding(b, m.Arguments[1])
}

// benchmarkTranscoding converts the payload alone, JSON to MessagePack and
// back.
func benchmarkTranscoding(b *testing.B, payload []byte) {
	mp, err := appendMsgpackFromJSON(nil, payload)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("json-to-msgpack/hubprobe", func(b *testing.B) {
		benchmarkEncode(b, func(dst []byte) ([]byte, error) { return appendMsgpackFromJSON(dst, payload) })
	})
	b.Run("json-to-msgpack/library", func(b *testing.B) {
		benchmarkEncode(b, func([]byte) ([]byte, error) { return libJSONToMsgpack(payload) })
	})
	b.Run("msgpack-to-json/hubprobe", func(b *testing.B) {
		benchmarkEncode(b, func(dst []byte) ([]byte, error) {
			r := msgpackReader{buf: mp}
			return r.appendJSONValue(dst, 0)
		})
	})
	b.Run("msgpack-to-json/library", func(b *testing.B) {
		benchmarkEncode(b, func([]byte) ([]byte, error) { return libMsgpackToJSON(mp) })
	})
}

// benchmarkEncode runs encode into a reused buffer, as the codecs'
// callers do.
func benchmarkEncode(b *testing.B, encode func(dst []byte) ([]byte, error)) {
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = encode(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func benchmarkDecode(b *testing.B, frame []byte, decode func() error) {
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if err := decode(); err != nil {
			b.Fatal(err)
		}
	}
}
