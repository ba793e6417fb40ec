package signalr

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestJSONProtocolRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		msg  Message
		wire string
	}{
		{"invocation", Message{Type: InvocationType, InvocationID: "1", Target: "Echo", Arguments: []json.RawMessage{raw(`"hi"`), raw(`{"a":1}`)}},
			`{"type":1,"invocationId":"1","target":"Echo","arguments":["hi",{"a":1}]}`},
		{"non-blocking invocation", Message{Type: InvocationType, Target: "Send", Arguments: []json.RawMessage{raw(`42`)}},
			`{"type":1,"target":"Send","arguments":[42]}`},
		{"invocation with streams and headers", Message{Type: InvocationType, InvocationID: "7", Target: "Up", Arguments: []json.RawMessage{}, StreamIDs: []string{"8", "9"}, Headers: map[string]string{"k": "v"}},
			`{"type":1,"invocationId":"7","target":"Up","arguments":[],"streamIds":["8","9"],"headers":{"k":"v"}}`},
		{"stream invocation", Message{Type: StreamInvocationType, InvocationID: "2", Target: "Count", Arguments: []json.RawMessage{raw(`3`)}},
			`{"type":4,"invocationId":"2","target":"Count","arguments":[3]}`},
		{"stream item", Message{Type: StreamItemType, InvocationID: "2", Item: raw(`[1,2]`)},
			`{"type":2,"invocationId":"2","item":[1,2]}`},
		{"completion with result", Message{Type: CompletionType, InvocationID: "1", Result: raw(`"ok"`)},
			`{"type":3,"invocationId":"1","result":"ok"}`},
		{"completion with null result", Message{Type: CompletionType, InvocationID: "1", Result: raw(`null`)},
			`{"type":3,"invocationId":"1","result":null}`},
		{"void completion", Message{Type: CompletionType, InvocationID: "1"},
			`{"type":3,"invocationId":"1"}`},
		{"completion with error", Message{Type: CompletionType, InvocationID: "1", Error: "boom \"quoted\"", HasError: true},
			`{"type":3,"invocationId":"1","error":"boom \"quoted\""}`},
		{"cancel", Message{Type: CancelInvocationType, InvocationID: "5"}, `{"type":5,"invocationId":"5"}`},
		{"ping", Message{Type: PingType}, `{"type":6}`},
		{"close", Message{Type: CloseType}, `{"type":7}`},
		{"close with error", Message{Type: CloseType, Error: "Connection count reaches limit.", HasError: true, AllowReconnect: true},
			`{"type":7,"error":"Connection count reaches limit.","allowReconnect":true}`},
		{"ack", Message{Type: AckType, SequenceID: 12}, `{"type":8,"sequenceId":12}`},
		{"sequence", Message{Type: SequenceType, SequenceID: 1 << 40}, `{"type":9,"sequenceId":1099511627776}`},
		{"non-ASCII target", Message{Type: InvocationType, Target: "é\n\u2028", Arguments: []json.RawMessage{}},
			`{"type":1,"target":"é\n\u2028","arguments":[]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := JSONProtocol{}.AppendMessage(nil, &tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.wire + "\x1e"; !jsonRecordEqual(t, string(b), want) {
				t.Errorf("encoded %q, want %q", b, want)
			}
			var got []Message
			rest, err := JSONProtocol{}.ParseMessages(b, func(m *Message) error { got = append(got, detached(m)); return nil })
			if err != nil || len(rest) != 0 || len(got) != 1 {
				t.Fatalf("parse: %d messages, rest %q, err %v", len(got), rest, err)
			}
			want := tc.msg
			if want.Type == InvocationType && want.Arguments == nil {
				want.Arguments = []json.RawMessage{}
			}
			if !reflect.DeepEqual(got[0], want) {
				t.Errorf("decoded %+v, want %+v", got[0], want)
			}
		})
	}
}

// jsonRecordEqual compares two records as JSON values, since only the
// escaping of some characters may differ between equal encodings.
func jsonRecordEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if json.Unmarshal([]byte(strings.TrimSuffix(a, "\x1e")), &va) != nil || !strings.HasSuffix(a, "\x1e") {
		return false
	}
	if err := json.Unmarshal([]byte(strings.TrimSuffix(b, "\x1e")), &vb); err != nil {
		t.Fatalf("test wire form %q is not JSON: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func TestJSONProtocolRejectsMalformedRecords(t *testing.T) {
	cases := map[string]string{
		"not JSON":                       `{"type":1,`,
		"not an object":                  `[1,2]`,
		"no type":                        `{"target":"x"}`,
		"type not a number":              `{"type":"1"}`,
		"unknown type":                   `{"type":42}`,
		"type zero":                      `{"type":0}`,
		"invocation without target":      `{"type":1,"arguments":[]}`,
		"stream invocation without id":   `{"type":4,"target":"x","arguments":[]}`,
		"stream item without id":         `{"type":2,"item":1}`,
		"completion without id":          `{"type":3,"result":1}`,
		"completion with result & error": `{"type":3,"invocationId":"1","result":1,"error":"e"}`,
		"cancel without id":              `{"type":5}`,
		"ack without sequence":           `{"type":8}`,
		"sequence id negative":           `{"type":9,"sequenceId":-1}`,
		"arguments not an array":         `{"type":1,"target":"x","arguments":5}`,
		"empty record":                   ``,
	}
	for name, record := range cases {
		t.Run(name, func(t *testing.T) {
			calls := 0
			_, err := JSONProtocol{}.ParseMessages([]byte(record+"\x1e"), func(*Message) error { calls++; return nil })
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("err = %v, want ErrProtocol", err)
			}
			if calls != 0 {
				t.Errorf("callback ran %d times for a bad record", calls)
			}
		})
	}
}

func TestJSONProtocolParsesSeveralRecordsAndKeepsTail(t *testing.T) {
	data := []byte("{\"type\":6}\x1e{\"type\":1,\"target\":\"A\",\"arguments\":[1]}\x1e{\"type\":3,\"invoc")
	var types []MessageType
	rest, err := JSONProtocol{}.ParseMessages(data, func(m *Message) error { types = append(types, m.Type); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(types, []MessageType{PingType, InvocationType}) {
		t.Errorf("types = %v", types)
	}
	if string(rest) != `{"type":3,"invoc` {
		t.Errorf("rest = %q", rest)
	}
}

// A probe parses every delivery: a frame of records costs no Message, no
// arguments' list, no repeated target and no copy of what the records
// carry.
func TestJSONProtocolParsesWithoutAllocating(t *testing.T) {
	echo := "{\"type\":1,\"target\":\"Echo\",\"arguments\":[{\"p\":\"" + strings.Repeat("x", 2048) + "\"},2]}\x1e"
	frame := []byte(strings.Repeat("{\"type\":6}\x1e", 10) + echo + echo + "{\"type\":3,\"invocationId\":\"1\",\"result\":\"" + strings.Repeat("x", 2048) + "\"}\x1e")
	var results, args int
	allocs := testing.AllocsPerRun(100, func() {
		_, err := JSONProtocol{}.ParseMessages(frame, func(m *Message) error {
			results += len(m.Result)
			args += len(m.Arguments)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	// The Message, its arguments' list and the target come from the
	// previous call's records.
	if allocs != 0 {
		t.Errorf("%v allocations for 13 records, want 0", allocs)
	}
	if results != 101*2050 || args != 101*4 {
		t.Errorf("parsed %d bytes of results and %d arguments, want %d and %d", results, args, 101*2050, 101*4)
	}
}

// TestJSONProtocolReusesOnlyWhatItLends parses records into one reused
// Message: a target that changes is the new one, a record without
// arguments has none, and a detached copy keeps its arguments after the
// records that follow it reused the list.
func TestJSONProtocolReusesOnlyWhatItLends(t *testing.T) {
	frame := []byte(`{"type":1,"target":"A","arguments":[1,2]}` + "\x1e" + `{"type":1,"target":"B","arguments":[3]}` + "\x1e" +
		`{"type":1,"target":"B"}` + "\x1e" + `{"type":6}` + "\x1e")
	var kept []Message
	var seen []string
	_, err := JSONProtocol{}.ParseMessages(frame, func(m *Message) error {
		kept = append(kept, detached(m))
		seen = append(seen, fmt.Sprintf("%s %d", m.Target, len(m.Arguments)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A 2", "B 1", "B 0", " 0"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("parsed %q, want %q", seen, want)
	}
	if got := fmt.Sprintf("%s %s", kept[0].Arguments, kept[1].Arguments); got != "[1 2] [3]" {
		t.Errorf("detached copies hold %s, want [1 2] [3]", got)
	}
	if kept[2].Arguments != nil || kept[3].Arguments != nil {
		t.Errorf("records without arguments decoded %q and %q, want nil", kept[2].Arguments, kept[3].Arguments)
	}
}

// detached is a copy of m that outlives the call that parsed it.
func detached(m *Message) Message {
	c := *m
	c.Detach()
	return c
}

func TestJSONProtocolStopsAtCallbackError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	_, err := JSONProtocol{}.ParseMessages([]byte("{\"type\":6}\x1e{\"type\":6}\x1e"), func(*Message) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("err = %v after %d calls, want stop after 1", err, calls)
	}
}

func TestJSONProtocolEncodesStreamIDsAsJSON(t *testing.T) {
	// Control characters must be JSON escapes, not Go escapes like \x01.
	m := Message{Type: StreamInvocationType, InvocationID: "1", Target: "t", StreamIDs: []string{"a\x01\"b"}}
	b, err := JSONProtocol{}.AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseJSONMessage(b[:len(b)-1])
	if err != nil {
		t.Fatalf("encoder output %q does not parse: %v", b, err)
	}
	if !reflect.DeepEqual(got.StreamIDs, m.StreamIDs) {
		t.Errorf("stream ids = %q", got.StreamIDs)
	}
}

func TestJSONProtocolRefusesUnknownTypeOnEncode(t *testing.T) {
	_, err := JSONProtocol{}.AppendMessage(nil, &Message{Type: 99})
	if !errors.Is(err, ErrProtocol) {
		t.Errorf("err = %v", err)
	}
}

// FuzzJSONProtocol feeds arbitrary bytes to the parser: it must never
// panic, and whatever it accepts must survive an encode/parse round trip.
func FuzzJSONProtocol(f *testing.F) {
	seeds := []string{
		"{\"type\":1,\"invocationId\":\"1\",\"target\":\"Echo\",\"arguments\":[\"x\",1,{\"a\":[]}],\"streamIds\":[\"2\"]}\x1e",
		"{\"type\":2,\"invocationId\":\"1\",\"item\":{\"v\":1}}\x1e{\"type\":3,\"invocationId\":\"1\"}\x1e",
		"{\"type\":3,\"invocationId\":\"1\",\"result\":null}\x1e{\"type\":3,\"invocationId\":\"2\",\"error\":\"e\"}\x1e",
		"{\"type\":4,\"invocationId\":\"1\",\"target\":\"S\",\"arguments\":[],\"headers\":{\"a\":\"b\"}}\x1e",
		"{\"type\":5,\"invocationId\":\"1\"}\x1e{\"type\":6}\x1e{\"type\":7,\"error\":\"x\",\"allowReconnect\":true}\x1e",
		"{\"type\":8,\"sequenceId\":3}\x1e{\"type\":9,\"sequenceId\":18446744073709551615}\x1e",
		"{\"type\":1,\"target\":\"\\u0000\\ud800\"}\x1e{\"ty",
		"\x1e\x1e",
		"{\"type\":1e400}\x1e",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = JSONProtocol{}.ParseMessages(data, func(m *Message) error {
			once, err := JSONProtocol{}.AppendMessage(nil, m)
			if err != nil {
				t.Fatalf("cannot encode accepted message %+v: %v", m, err)
			}
			first := parseOne(t, once)
			twice, err := JSONProtocol{}.AppendMessage(nil, &first)
			if err != nil {
				t.Fatal(err)
			}
			if second := parseOne(t, twice); !reflect.DeepEqual(first, second) {
				t.Fatalf("round trip changed %+v into %+v", first, second)
			}
			return nil
		})
	})
}

func parseOne(t *testing.T, record []byte) Message {
	t.Helper()
	var got []Message
	rest, err := JSONProtocol{}.ParseMessages(record, func(m *Message) error { got = append(got, *m); return nil })
	if err != nil || len(rest) != 0 || len(got) != 1 {
		t.Fatalf("encoder output %q: %d messages, rest %q, err %v", record, len(got), rest, err)
	}
	return got[0]
}
