package signalr

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// mpHex turns "96 01 80" into bytes; spaces are for reading only.
func mpHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad test hex %q: %v", s, err)
	}
	return b
}

// mpFrame puts a VarInt length prefix in front of body.
func mpFrame(body []byte) []byte {
	var out []byte
	n := uint64(len(body))
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	return append(append(out, byte(n)), body...)
}

func mpParseAll(t testing.TB, data []byte) []Message {
	t.Helper()
	var got []Message
	rest, err := MessagePackProtocol{}.ParseMessages(data, func(m *Message) error { got = append(got, *m); return nil })
	if err != nil || len(rest) != 0 {
		t.Fatalf("parse % x: rest % x, err %v", data, rest, err)
	}
	return got
}

func mpEncode(t testing.TB, m Message) []byte {
	t.Helper()
	b, err := MessagePackProtocol{}.AppendMessage(nil, &m)
	if err != nil {
		t.Fatalf("encode %+v: %v", m, err)
	}
	return b
}

func mpArgs(values ...string) []json.RawMessage {
	args := make([]json.RawMessage, len(values))
	for i, v := range values {
		args[i] = json.RawMessage(v)
	}
	return args
}

func TestMessagePackProtocolIdentity(t *testing.T) {
	p := MessagePackProtocol{}
	if p.Name() != "messagepack" || p.Version() != 1 || p.TransferFormat() != BinaryFormat {
		t.Errorf("got %q v%d %q", p.Name(), p.Version(), p.TransferFormat())
	}
}

// The message bodies below are the examples of the SignalR HubProtocol
// spec, byte for byte.
func TestMessagePackSpecExamples(t *testing.T) {
	cases := []struct {
		name string
		body string
		msg  Message
		// ours is what hubprobe writes when it differs from the spec's
		// bytes (the spec allows any integer size for sequence ids).
		ours string
	}{
		{"invocation", "96 01 80 a3 78797a a6 6d6574686f64 91 2a 90",
			Message{Type: InvocationType, InvocationID: "xyz", Target: "method", Arguments: mpArgs("42")}, ""},
		{"non-blocking invocation", "96 01 80 c0 a6 6d6574686f64 91 2a 90",
			Message{Type: InvocationType, Target: "method", Arguments: mpArgs("42")}, ""},
		{"stream invocation", "96 04 80 a3 78797a a6 6d6574686f64 91 2a 90",
			Message{Type: StreamInvocationType, InvocationID: "xyz", Target: "method", Arguments: mpArgs("42")}, ""},
		{"stream item", "94 02 80 a3 78797a 2a",
			Message{Type: StreamItemType, InvocationID: "xyz", Item: json.RawMessage("42")}, ""},
		{"completion with error", "95 03 80 a3 78797a 01 a5 4572726f72",
			Message{Type: CompletionType, InvocationID: "xyz", Error: "Error", HasError: true}, ""},
		{"void completion", "94 03 80 a3 78797a 02",
			Message{Type: CompletionType, InvocationID: "xyz"}, ""},
		{"completion with result", "95 03 80 a3 78797a 03 2a",
			Message{Type: CompletionType, InvocationID: "xyz", Result: json.RawMessage("42")}, ""},
		{"cancel invocation", "93 05 80 a3 78797a",
			Message{Type: CancelInvocationType, InvocationID: "xyz"}, ""},
		{"ping", "91 06", Message{Type: PingType}, ""},
		{"close", "92 07 a3 78797a",
			Message{Type: CloseType, Error: "xyz", HasError: true}, ""},
		{"close allowing reconnect", "93 07 a3 78797a c3",
			Message{Type: CloseType, Error: "xyz", HasError: true, AllowReconnect: true}, ""},
		{"ack", "92 08 cc 24", Message{Type: AckType, SequenceID: 36}, "92 08 24"},
		{"sequence", "92 09 cc 13", Message{Type: SequenceType, SequenceID: 19}, "92 09 13"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := mpHex(t, tc.body)
			got := mpParseAll(t, mpFrame(body))
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.msg) {
				t.Fatalf("parsed %+v, want %+v", got, tc.msg)
			}
			want := body
			if tc.ours != "" {
				want = mpHex(t, tc.ours)
			}
			if enc := mpEncode(t, tc.msg); !bytes.Equal(enc, mpFrame(want)) {
				t.Errorf("encoded % x, want % x", enc, mpFrame(want))
			}
		})
	}
}

func TestMessagePackSpecHeadersExample(t *testing.T) {
	body := mpHex(t, "96 01 82 a1 78 a1 79 a1 7a a1 7a a3 78797a a6 6d6574686f64 91 2a 90")
	want := Message{Type: InvocationType, InvocationID: "xyz", Target: "method", Arguments: mpArgs("42"),
		Headers: map[string]string{"x": "y", "z": "z"}}
	got := mpParseAll(t, mpFrame(body))
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	// Map order is not fixed, so either order of the two headers is right.
	swapped := mpHex(t, "96 01 82 a1 7a a1 7a a1 78 a1 79 a3 78797a a6 6d6574686f64 91 2a 90")
	if enc := mpEncode(t, want); !bytes.Equal(enc, mpFrame(body)) && !bytes.Equal(enc, mpFrame(swapped)) {
		t.Errorf("encoded % x", enc)
	}
}

func TestMessagePackVarIntLengthPrefix(t *testing.T) {
	cases := []struct {
		prefix string
		size   int
	}{
		{"35", 53},      // spec example
		{"80 29", 5248}, // spec example
		{"01", 1},
		{"7f", 127},
		{"80 01", 128},
		{"ff ff ff 07", 16<<20 - 1},
		{"80 80 80 08", MaxMessagePackMessageSize},
	}
	for _, tc := range cases {
		size, n, err := readMessagePackLength(mpHex(t, tc.prefix))
		if err != nil || size != tc.size || n != len(mpHex(t, tc.prefix)) {
			t.Errorf("%s: size %d, n %d, err %v; want %d", tc.prefix, size, n, err, tc.size)
		}
	}
	// The writer picks the same prefixes: build bodies of exactly 53 and
	// 5248 bytes from a stream item whose string item fills the rest.
	for _, tc := range cases[:2] {
		var enc []byte
		for l := 0; len(enc) == 0 || len(enc)-len(mpHex(t, tc.prefix)) != tc.size; l++ {
			enc = mpEncode(t, Message{Type: StreamItemType, InvocationID: "x", Item: json.RawMessage(`"` + strings.Repeat("a", l) + `"`)})
			if l > tc.size {
				t.Fatalf("no item length gives a %d-byte body", tc.size)
			}
		}
		if !bytes.HasPrefix(enc, mpHex(t, tc.prefix)) {
			t.Errorf("%d-byte body framed as % x...", tc.size, enc[:3])
		}
		if got := mpParseAll(t, enc); len(got) != 1 {
			t.Errorf("%d-byte body: %d messages", tc.size, len(got))
		}
	}
}

func TestMessagePackLengthPrefixLimits(t *testing.T) {
	cases := map[string]string{
		"largest VarInt (2 GiB - 1) is over our limit": "ff ff ff ff 07 00 00",
		"one byte over the limit":                      "81 80 80 08",
		"VarInt value above 0x7fffffff":                "ff ff ff ff 0f",
		"sixth prefix byte":                            "80 80 80 80 80 01",
		"empty message":                                "00",
		"empty message, two-byte prefix":               "80 00",
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			rest, err := MessagePackProtocol{}.ParseMessages(mpHex(t, data), func(*Message) error {
				t.Error("callback ran")
				return nil
			})
			if !errors.Is(err, ErrProtocol) || rest != nil {
				t.Errorf("rest % x, err %v; want ErrProtocol", rest, err)
			}
		})
	}
	// The spec's largest length, FF FF FF FF 07, reads as 0x7fffffff.
	_, _, err := readMessagePackLength(mpHex(t, "ff ff ff ff 07"))
	if err == nil || !strings.Contains(err.Error(), "2147483647 bytes") {
		t.Errorf("err = %v, want it to name 2147483647 bytes", err)
	}
}

// mpSampleMessages covers every message type and the optional parts of
// each, with argument values already in canonical JSON form.
func mpSampleMessages() []Message {
	return []Message{
		{Type: InvocationType, InvocationID: "1", Target: "Echo", Arguments: mpArgs(`"hi"`, `{"a":1,"b":[true,false,null]}`)},
		{Type: InvocationType, Target: "Send", Arguments: mpArgs(`42`, `-1.5`, `"é☃😀"`)},
		{Type: InvocationType, InvocationID: "7", Target: "Up", Arguments: []json.RawMessage{}, StreamIDs: []string{"8", "9"}, Headers: map[string]string{"k": "v"}},
		{Type: StreamInvocationType, InvocationID: "2", Target: "Count", Arguments: mpArgs(`3`)},
		{Type: StreamItemType, InvocationID: "2", Item: json.RawMessage(`[1,2,{"x":{}}]`)},
		{Type: StreamItemType, InvocationID: "2", Item: json.RawMessage(`null`), Headers: map[string]string{"a": "b"}},
		{Type: CompletionType, InvocationID: "1", Result: json.RawMessage(`"ok"`)},
		{Type: CompletionType, InvocationID: "1", Result: json.RawMessage(`null`)},
		{Type: CompletionType, InvocationID: "1"},
		{Type: CompletionType, InvocationID: "1", Error: `boom "quoted"`, HasError: true},
		{Type: CancelInvocationType, InvocationID: "5"},
		{Type: PingType},
		{Type: CloseType},
		{Type: CloseType, AllowReconnect: true},
		{Type: CloseType, Error: "Connection count reaches limit.", HasError: true, AllowReconnect: true},
		{Type: AckType, SequenceID: 12},
		{Type: SequenceType, SequenceID: 1<<64 - 1},
	}
}

// TestMessagePackAndJSONAgree sends every sample through both protocols:
// scenarios must see the same Message whichever one the hub speaks.
func TestMessagePackAndJSONAgree(t *testing.T) {
	for _, want := range mpSampleMessages() {
		jsonWire, err := JSONProtocol{}.AppendMessage(nil, &want)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON []Message
		if _, err := (JSONProtocol{}).ParseMessages(jsonWire, func(m *Message) error { fromJSON = append(fromJSON, detached(m)); return nil }); err != nil || len(fromJSON) != 1 {
			t.Fatalf("JSON %q: %d messages, %v", jsonWire, len(fromJSON), err)
		}
		fromMsgpack := mpParseAll(t, mpEncode(t, want))
		// The JSON codec writes headers on invocations only.
		jsonDropsHeaders := want.Headers != nil && want.Type != InvocationType && want.Type != StreamInvocationType
		if len(fromMsgpack) != 1 || !jsonDropsHeaders && !reflect.DeepEqual(fromMsgpack[0], fromJSON[0]) {
			t.Errorf("MessagePack gave %+v, JSON gave %+v", fromMsgpack, fromJSON[0])
		}
		if !reflect.DeepEqual(fromMsgpack[0], want) {
			t.Errorf("round trip gave %+v, want %+v", fromMsgpack[0], want)
		}
	}
}

func TestMessagePackSeveralMessagesAndPartialFrames(t *testing.T) {
	samples := mpSampleMessages()
	var stream []byte
	for i := range samples {
		var err error
		if stream, err = (MessagePackProtocol{}).AppendMessage(stream, &samples[i]); err != nil {
			t.Fatal(err)
		}
	}
	if got := mpParseAll(t, stream); !reflect.DeepEqual(got, samples) {
		t.Fatalf("one frame with all messages: got %d messages", len(got))
	}
	// Cut the stream at every byte: the first call must return the
	// partial message as rest, and rest plus the remainder must finish it.
	for cut := 0; cut <= len(stream); cut++ {
		var got []Message
		collect := func(m *Message) error { got = append(got, *m); return nil }
		rest, err := MessagePackProtocol{}.ParseMessages(stream[:cut], collect)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		rest, err = MessagePackProtocol{}.ParseMessages(append(bytes.Clone(rest), stream[cut:]...), collect)
		if err != nil || len(rest) != 0 {
			t.Fatalf("cut %d: rest % x, err %v", cut, rest, err)
		}
		if !reflect.DeepEqual(got, samples) {
			t.Fatalf("cut %d: got %d messages, want %d", cut, len(got), len(samples))
		}
	}
}

func TestMessagePackParsedValuesDoNotAliasInput(t *testing.T) {
	frame := mpEncode(t, Message{Type: InvocationType, InvocationID: "1", Target: "T", Arguments: mpArgs(`"abc"`, `[1]`), StreamIDs: []string{"s"}})
	got := mpParseAll(t, frame)[0]
	for i := range frame {
		frame[i] = 0
	}
	want := Message{Type: InvocationType, InvocationID: "1", Target: "T", Arguments: mpArgs(`"abc"`, `[1]`), StreamIDs: []string{"s"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after the read buffer was reused: %+v", got)
	}
	// Arguments share one buffer; growing one must not overwrite the next.
	_ = append(got.Arguments[0], "XXXX"...)
	if string(got.Arguments[1]) != `[1]` {
		t.Errorf("argument 1 became %q", got.Arguments[1])
	}
}

// Readers must accept what other writers produce: fewer optional
// elements, nil where hubprobe writes empty containers, wider integer
// formats, and extra trailing elements from a later protocol revision.
func TestMessagePackAcceptsOtherWritersForms(t *testing.T) {
	cases := []struct {
		name string
		body string
		want Message
	}{
		{"invocation without stream ids", "95 01 80 a1 31 a1 54 90",
			Message{Type: InvocationType, InvocationID: "1", Target: "T", Arguments: []json.RawMessage{}}},
		{"nil stream ids", "96 04 80 a1 31 a1 54 90 c0",
			Message{Type: StreamInvocationType, InvocationID: "1", Target: "T", Arguments: []json.RawMessage{}}},
		{"nil headers", "94 02 c0 a1 31 c0",
			Message{Type: StreamItemType, InvocationID: "1", Item: json.RawMessage("null")}},
		{"type as uint8", "91 cc 06", Message{Type: PingType}},
		{"close with nil error (JS client)", "92 07 c0", Message{Type: CloseType}},
		{"close with allowReconnect false", "93 07 c0 c2", Message{Type: CloseType}},
		{"sequence id as uint64", "92 09 cf 0000000100000000", Message{Type: SequenceType, SequenceID: 1 << 32}},
		{"sequence id as int16", "92 08 d1 0100", Message{Type: AckType, SequenceID: 256}},
		{"str8 holding a short id", "93 05 80 d9 01 61", Message{Type: CancelInvocationType, InvocationID: "a"}},
		{"array16 arguments", "96 01 80 c0 a1 54 dc 0001 01 90",
			Message{Type: InvocationType, Target: "T", Arguments: mpArgs("1")}},
		{"ping with extra elements", "94 06 01 a1 78 80", Message{Type: PingType}},
		{"invocation with a 7th element", "97 01 80 a1 31 a1 54 90 91 a1 73 82 a1 61 90 a1 62 c3",
			Message{Type: InvocationType, InvocationID: "1", Target: "T", Arguments: []json.RawMessage{}, StreamIDs: []string{"s"}}},
		{"completion with extra element", "96 03 80 a1 31 03 2a ca 3fc00000",
			Message{Type: CompletionType, InvocationID: "1", Result: json.RawMessage("42")}},
		{"void completion with extra element", "95 03 80 a1 31 02 c0",
			Message{Type: CompletionType, InvocationID: "1"}},
		{"close with extra element", "94 07 c0 c3 d6 ff 00000000", Message{Type: CloseType, AllowReconnect: true}},
		{"ack with extra element", "93 08 05 c4 02 0102", Message{Type: AckType, SequenceID: 5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mpParseAll(t, mpFrame(mpHex(t, tc.body)))
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// deepMessagePack nests arrays past the depth limit.
var deepMessagePack = strings.Repeat("91", maxValueDepth+5) + "c0"

// malformedMessagePack maps what is wrong with a message to its bytes in hex.
var malformedMessagePack = map[string]string{
	"not an array":                         "c0",
	"a bare integer":                       "06",
	"empty array":                          "90",
	"type is a string":                     "91 a1 36",
	"type is nil":                          "91 c0",
	"type zero":                            "91 00",
	"type ten":                             "91 0a",
	"type negative":                        "91 ff",
	"type huge":                            "91 cf ffffffffffffffff",
	"invocation missing arguments":         "94 01 80 c0 a1 54",
	"invocation target nil":                "96 01 80 c0 c0 90 90",
	"invocation target integer":            "96 01 80 c0 01 90 90",
	"invocation target empty":              "96 01 80 c0 a0 90 90",
	"invocation id integer":                "96 01 80 01 a1 54 90 90",
	"arguments not an array":               "96 01 80 c0 a1 54 05 90",
	"arguments count beyond body":          "96 01 80 c0 a1 54 dd ffffffff",
	"stream ids not an array":              "96 01 80 c0 a1 54 90 a1 31",
	"stream id integer":                    "96 01 80 c0 a1 54 90 91 01",
	"headers not a map":                    "96 01 05 c0 a1 54 90 90",
	"header value integer":                 "96 01 81 a1 6b 01 c0 a1 54 90 90",
	"header key nil":                       "96 01 81 c0 a1 76 c0 a1 54 90 90",
	"headers count beyond body":            "96 01 df ffffffff",
	"stream invocation without id":         "96 04 80 c0 a1 54 90 90",
	"stream item without id":               "94 02 80 c0 01",
	"stream item missing item":             "93 02 80 a1 31",
	"completion without id":                "94 03 80 c0 02",
	"completion unknown kind":              "95 03 80 a1 31 04 01",
	"completion kind not an integer":       "95 03 80 a1 31 a1 33 01",
	"completion error kind without error":  "94 03 80 a1 31 01",
	"completion result kind without value": "94 03 80 a1 31 03",
	"completion error not a string":        "95 03 80 a1 31 01 01",
	"cancel without id":                    "93 05 80 c0",
	"close error integer":                  "92 07 01",
	"close allowReconnect integer":         "93 07 c0 01",
	"close without error element":          "91 07",
	"ack without sequence id":              "91 08",
	"ack negative sequence id":             "92 08 ff",
	"sequence id a string":                 "92 09 a1 31",
	"sequence id a float":                  "92 09 cb 3ff0000000000000",
	"bytes after the array":                "91 06 00",
	"truncated string":                     "92 07 a5 61",
	"truncated extra element":              "92 06 a5 61",
	"extra element with reserved byte":     "92 06 c1",
	"argument NaN":                         "96 01 80 c0 a1 54 91 cb 7ff8000000000000 90",
	"argument infinity (float32)":          "96 01 80 c0 a1 54 91 ca 7f800000 90",
	"argument unknown extension":           "96 01 80 c0 a1 54 91 d4 05 00 90",
	"argument map with boolean key":        "96 01 80 c0 a1 54 91 81 c3 01 90",
	"argument nested too deep":             "96 01 80 c0 a1 54 91 " + deepMessagePack + " 90",
	"result nested too deep":               "95 03 80 a1 31 03 " + deepMessagePack,
	"extra element nested too deep":        "92 06 " + deepMessagePack,
	"item truncated inside a map":          "94 02 80 a1 31 82 a1 61 01",
}

func TestMessagePackRejectsMalformedMessages(t *testing.T) {
	cases := malformedMessagePack
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			data := append(mpFrame(mpHex(t, body)), mpEncode(t, Message{Type: PingType})...)
			rest, err := MessagePackProtocol{}.ParseMessages(data, func(*Message) error {
				t.Error("callback ran for a bad message")
				return nil
			})
			if !errors.Is(err, ErrProtocol) || rest != nil {
				t.Errorf("rest % x, err %v; want ErrProtocol", rest, err)
			}
		})
	}
}

func TestMessagePackDeliversMessagesBeforeABadOne(t *testing.T) {
	data := append(mpEncode(t, Message{Type: PingType}), mpFrame(mpHex(t, "91 63"))...)
	calls := 0
	_, err := MessagePackProtocol{}.ParseMessages(data, func(*Message) error { calls++; return nil })
	if !errors.Is(err, ErrProtocol) || calls != 1 {
		t.Errorf("err %v after %d calls; want ErrProtocol after 1", err, calls)
	}
}

func TestMessagePackStopsAtCallbackError(t *testing.T) {
	stop := errors.New("stop")
	data := append(mpEncode(t, Message{Type: PingType}), mpEncode(t, Message{Type: PingType})...)
	calls := 0
	_, err := MessagePackProtocol{}.ParseMessages(data, func(*Message) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("err = %v after %d calls, want stop after 1", err, calls)
	}
}

func TestMessagePackEncodeErrorsLeaveDstUnchanged(t *testing.T) {
	cases := map[string]Message{
		"unknown type":          {Type: 42},
		"type zero":             {},
		"argument not JSON":     {Type: InvocationType, Target: "T", Arguments: mpArgs(`1`, `{"a":`)},
		"item with trailing":    {Type: StreamItemType, InvocationID: "1", Item: json.RawMessage(`1 2`)},
		"result out of range":   {Type: CompletionType, InvocationID: "1", Result: json.RawMessage(`1e400`)},
		"body over the limit":   {Type: StreamItemType, InvocationID: "1", Item: json.RawMessage(`"` + strings.Repeat("a", MaxMessagePackMessageSize) + `"`)},
		"argument is not JSON ": {Type: InvocationType, Target: "T", Arguments: mpArgs(`'single'`)},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := MessagePackProtocol{}.AppendMessage(dst, &m)
			if !errors.Is(err, ErrProtocol) || string(out) != "keep" {
				t.Errorf("out %.20q, err %v; want ErrProtocol and dst unchanged", out, err)
			}
		})
	}
}

func TestMessagePackEncodesEmptyValueAsNil(t *testing.T) {
	// An empty RawMessage is written as null by the JSON protocol too.
	enc := mpEncode(t, Message{Type: StreamItemType, InvocationID: "1", Item: json.RawMessage{}})
	if want := mpFrame(mpHex(t, "94 02 80 a1 31 c0")); !bytes.Equal(enc, want) {
		t.Errorf("encoded % x, want % x", enc, want)
	}
}

func TestMessagePackAppendsAfterExistingData(t *testing.T) {
	dst := mpEncode(t, Message{Type: PingType})
	dst, err := MessagePackProtocol{}.AppendMessage(dst, &Message{Type: CancelInvocationType, InvocationID: "xyz"})
	if err != nil {
		t.Fatal(err)
	}
	if want := mpHex(t, "02 91 06 07 93 05 80 a3 78797a"); !bytes.Equal(dst, want) {
		t.Errorf("got % x, want % x", dst, want)
	}
}

func TestProtocolByName(t *testing.T) {
	for name, want := range map[string]HubProtocol{"json": JSONProtocol{}, "messagepack": MessagePackProtocol{}} {
		got, err := ProtocolByName(name)
		if err != nil || got != want || got.Name() != name {
			t.Errorf("ProtocolByName(%q) = %v, %v", name, got, err)
		}
	}
	for _, name := range []string{"", "JSON", "msgpack", "protobuf"} {
		if got, err := ProtocolByName(name); err == nil || got != nil || !strings.Contains(err.Error(), "unknown hub protocol") {
			t.Errorf("ProtocolByName(%q) = %v, %v; want an error", name, got, err)
		}
	}
}

// mpBenchmarkInvocation is an echo invocation shaped like a scenario's:
// a connection id and a payload object carrying a 2 KB blob.
func mpBenchmarkInvocation() Message {
	payload := `{"payload.Run":"AbCdEfGh","payload.MessageBlob":"` + strings.Repeat("Zm9v", 512) + `","payload.Timestamp":123456789}`
	return Message{Type: InvocationType, InvocationID: "17", Target: "Echo", Arguments: mpArgs(`"conn-0123456789"`, payload)}
}

func BenchmarkMessagePackEncodeDecode(b *testing.B) {
	m := mpBenchmarkInvocation()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = (MessagePackProtocol{}).AppendMessage(buf[:0], &m); err != nil {
			b.Fatal(err)
		}
		if _, err := (MessagePackProtocol{}).ParseMessages(buf, func(*Message) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkJSONEncodeDecode is the same message through the JSON protocol,
// for comparison.
func BenchmarkJSONEncodeDecode(b *testing.B) {
	m := mpBenchmarkInvocation()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = (JSONProtocol{}).AppendMessage(buf[:0], &m); err != nil {
			b.Fatal(err)
		}
		if _, err := (JSONProtocol{}).ParseMessages(buf, func(*Message) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}
