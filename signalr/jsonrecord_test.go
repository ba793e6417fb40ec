package signalr

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// jsonWireMessage mirrors the JSON hub protocol's field names for the
// encoding/json reference decoder; its name appears in the type errors.
type jsonWireMessage struct {
	Type           *int              `json:"type"`
	InvocationID   *string           `json:"invocationId"`
	Target         string            `json:"target"`
	Arguments      []json.RawMessage `json:"arguments"`
	StreamIDs      []string          `json:"streamIds"`
	Headers        map[string]string `json:"headers"`
	Item           json.RawMessage   `json:"item"`
	Result         json.RawMessage   `json:"result"`
	Error          *string           `json:"error"`
	AllowReconnect bool              `json:"allowReconnect"`
	SequenceID     *uint64           `json:"sequenceId"`
}

// parseJSONMessage decodes one record (without its separator) with the
// scanner JSONProtocol.ParseMessages uses, into a message that does not
// alias record, as a reader that keeps the message has it.
func parseJSONMessage(record []byte) (Message, error) {
	var m Message
	err := parseJSONRecordInto(record, &m, &spare{})
	m.Detach()
	return m, err
}

// parseJSONMessageReference is the encoding/json decoder that the scanner
// replaced; the scanner must agree with it on every input.
func parseJSONMessageReference(record []byte) (Message, error) {
	var w jsonWireMessage
	if err := json.Unmarshal(record, &w); err != nil {
		return Message{}, fmt.Errorf("%w: invalid JSON record: %v", ErrProtocol, err)
	}
	if w.Type == nil {
		return Message{}, fmt.Errorf("%w: record has no \"type\"", ErrProtocol)
	}
	m := Message{
		Type:           MessageType(*w.Type),
		Target:         w.Target,
		Arguments:      w.Arguments,
		StreamIDs:      w.StreamIDs,
		Headers:        w.Headers,
		Item:           w.Item,
		Result:         w.Result,
		AllowReconnect: w.AllowReconnect,
	}
	if w.InvocationID != nil {
		m.InvocationID = *w.InvocationID
	}
	if w.Error != nil {
		m.Error, m.HasError = *w.Error, true
	}
	if w.SequenceID != nil {
		m.SequenceID = *w.SequenceID
	}
	// validateMessage may fill m: it runs before m is returned, not beside it.
	err := validateMessage(&m, w.InvocationID != nil, w.SequenceID != nil)
	return m, err
}

// checkMatchesReference parses record both ways and fails on any difference
// in the message or in whether it is an error. It also checks that the
// message does not alias record, by overwriting record afterwards.
func checkMatchesReference(t *testing.T, record []byte) {
	t.Helper()
	want, wantErr := parseJSONMessageReference(record)
	input := append([]byte(nil), record...)
	if len(record) > 300 {
		record = append(record[:300:300], "..."...) // for messages only
	}
	got, gotErr := parseJSONMessage(input)
	for i := range input {
		input[i] = '#'
	}
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("record %q: error %v, encoding/json says %v", record, gotErr, wantErr)
	}
	if gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("record %q: error %q, encoding/json says %q", record, gotErr, wantErr)
	}
	if gotErr != nil && !errors.Is(gotErr, ErrProtocol) {
		t.Fatalf("record %q: error %v does not wrap ErrProtocol", record, gotErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("record %q:\n got %#v\nwant %#v", record, got, want)
	}
}

// scannerEdgeCases are records where a hand-written JSON decoder most
// easily parts from encoding/json.
var scannerEdgeCases = []string{
	``, ` `, `null`, `[]`, `"x"`, `1`, `{}`, `{"type":1}`, ` {"type":6} `, "\t{\"type\":6}\r\n",
	`{"type":6}x`, `{"type":6}{}`, `{"type":6,}`, `{,"type":6}`, `{"type" 6}`, `{"type":6`, `{'type':6}`,
	"{\"type\":6}\x00", "{\"type\":6}\f", "\v{\"type\":6}",
	// numbers
	`{"type":6.0}`, `{"type":6e0}`, `{"type":06}`, `{"type":-0}`, `{"type":+6}`, `{"type":-}`, `{"type":6.}`,
	`{"type":.6}`, `{"type":1e}`, `{"type":1e+}`, `{"type":9223372036854775807}`, `{"type":-9223372036854775808}`,
	`{"type":9223372036854775808}`, `{"type":-9223372036854775809}`, `{"type":99999999999999999999}`,
	`{"type":8,"sequenceId":18446744073709551615}`, `{"type":8,"sequenceId":18446744073709551616}`,
	`{"type":8,"sequenceId":-0}`, `{"type":8,"sequenceId":-1}`, `{"type":8,"sequenceId":1.5}`, `{"type":8,"sequenceId":"1"}`,
	`{"type":6,"x":-0.5e-7}`, `{"type":6,"x":1E+2}`, `{"type":6,"x":01}`, `{"type":6,"x":-01.0}`, `{"type":6,"x":0.0e}`,
	// literals and nulls
	`{"type":6,"x":nul}`, `{"type":6,"x":truex}`, `{"type":6,"x":tru}`, `{"type":6,"x":False}`, `{"type":null}`,
	`{"type":1,"type":null}`, `{"type":null,"type":6}`, `{"type":"6"}`, `{"type":true}`, `{"type":[6]}`, `{"type":{}}`,
	`{"type":3,"invocationId":"1","invocationId":null}`, `{"type":3,"invocationId":"1","result":null}`,
	`{"type":3,"invocationId":"1","result":1,"error":"e"}`, `{"type":3,"invocationId":"1","error":"e","error":null,"result":2}`,
	`{"type":1,"target":"a","target":null}`, `{"type":1,"target":5}`, `{"type":7,"allowReconnect":true,"allowReconnect":null}`,
	`{"type":7,"allowReconnect":1}`, `{"type":7,"allowReconnect":"true"}`, `{"type":2,"invocationId":"1","item":null}`,
	`{"type":2,"invocationId":"1","item": [ 1 , {"a" : null} ] }`, `{"type":2,"invocationId":"1","item":}`,
	// lists and maps given twice
	`{"type":1,"target":"a","arguments":[1,2],"arguments":[3]}`, `{"type":1,"target":"a","arguments":[1],"arguments":null}`,
	`{"type":1,"target":"a","arguments":[1],"arguments":[]}`, `{"type":1,"target":"a","arguments":[null, true ,"s"]}`,
	`{"type":1,"target":"a","arguments":{}}`, `{"type":1,"target":"a","arguments":"x"}`, `{"type":1,"target":"a","arguments":[1,]}`,
	`{"type":1,"target":"a","streamIds":["a","b"],"streamIds":["c"],"streamIds":[null,null]}`,
	`{"type":1,"target":"a","streamIds":["a"],"streamIds":[],"streamIds":[null]}`, `{"type":1,"target":"a","streamIds":[1]}`,
	`{"type":1,"target":"a","streamIds":[null,"x",null]}`, `{"type":1,"target":"a","streamIds":null}`,
	`{"type":1,"target":"a","headers":{"a":"1"},"headers":{"b":null}}`, `{"type":1,"target":"a","headers":{"a":"1"},"headers":null}`,
	`{"type":1,"target":"a","headers":{}}`, `{"type":1,"target":"a","headers":{"a":1}}`, `{"type":1,"target":"a","headers":[]}`,
	`{"type":1,"target":"a","headers":{"\u00e9\n":"\ud83d\ude00","a":"x","a":"y"}}`,
	// member names: case folding, escapes, U+017F and U+212A
	`{"TYPE":6}`, `{"Type":6,"type":7}`, `{"type":6,"TYPE":7}`, `{"\u0074ype":6}`, `{"typ\u0065":6,"x":1}`,
	`{"type":8,"ſequenceId":3}`, `{"type":8,"\u017fequenceId":3}`, `{"type":1,"target":"t","ſtreamIdſ":["x"]}`,
	`{"type":6,"type\u0000":7}`, `{"type":6,"typeK":7}`, `{"type":6,"ty pe":7}`, `{"type":6,"tyPE ":7}`,
	"{\"type\":6,\"t\xffype\":7}", "{\"typ\xc5\":6}", `{"type":1,"TARGET":"x","ARGUMENTS":[1],"InvocationID":"9"}`,
	// strings: escapes, surrogates, invalid UTF-8, control bytes
	`{"type":1,"target":"\"\\\/\b\f\n\r\t"}`, `{"type":1,"target":"\u00e9\u2028\uFFFF\u0000"}`,
	`{"type":1,"target":"\ud83d\ude00"}`, `{"type":1,"target":"\ud83d"}`, `{"type":1,"target":"\ude00\ud83d"}`,
	`{"type":1,"target":"\ud83d\u0041"}`, `{"type":1,"target":"\ud83d\ud83d\ude00"}`, `{"type":1,"target":"\ud83dx"}`,
	`{"type":1,"target":"\ud83d\"}`, `{"type":1,"target":"\u12"}`, `{"type":1,"target":"\u12G4"}`, `{"type":1,"target":"\x"}`,
	`{"type":1,"target":"\'"}`, "{\"type\":1,\"target\":\"a\x01\"}", "{\"type\":1,\"target\":\"a\x7f\"}",
	"{\"type\":1,\"target\":\"\xff\xfe\xc3\"}", "{\"type\":1,\"target\":\"\xed\xa0\x80\xef\xbf\xbd\"}",
	"{\"type\":1,\"target\":\"t\",\"arguments\":[\"\xff\",\"\x01\"]}", `{"type":1,"target":"t","arguments":["\q"]}`,
	`{"type":1,"target":"t","arguments":[{"a":"\u00"}]}`, `{"type":1,"target":"t","arguments":[{"a" "b"}]}`,
	`{"type":1,"target":"t","arguments":[{"a":1,}]}`, `{"type":1,"target":"t","arguments":[[1,2],[]]]}`,
	// message type rules
	`{"type":1}`, `{"type":1,"target":""}`, `{"type":4,"target":"t"}`, `{"type":4,"invocationId":"","target":"t"}`,
	`{"type":2}`, `{"type":5,"invocationId":"5"}`, `{"type":3}`, `{"type":8}`, `{"type":9,"sequenceId":0}`, `{"type":0}`,
	`{"type":10}`, `{"type":-1}`,
	// input ending inside a token
	`"\`, `{"type":1`, `{"type":-`, `{"type":1.`, `{"type":1e`, `{"type":1e+`, `{"type":tr`, `{"type":n`,
	`{"a":"\u12`, `{"type":1,"target":"x`, `{"type":1 `, `{"type":`, `{"type"`, `{"type":[`, `{"type":[1,`,
}

func TestJSONParseMatchesEncodingJSONOnEdgeCases(t *testing.T) {
	for _, c := range scannerEdgeCases {
		checkMatchesReference(t, []byte(c))
	}
	deep := func(n int) string {
		return `{"type":6,"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	for _, n := range []int{9998, 9999, 10000} {
		checkMatchesReference(t, []byte(deep(n)))
	}
	if _, err := parseJSONMessage([]byte(deep(9999))); err != nil {
		t.Errorf("nesting of 10000 levels: %v", err)
	}
	if _, err := parseJSONMessage([]byte(deep(10000))); !errors.Is(err, ErrProtocol) {
		t.Errorf("nesting of 10001 levels: err = %v, want ErrProtocol", err)
	}
}

func TestJSONParseDecodesStringsLikeEncodingJSON(t *testing.T) {
	m, err := parseJSONMessage([]byte("{\"type\":1,\"target\":\"\\ud83d\\ude00\\ud800x\xff\\u00e9\",\"headers\":{\"\\n\":\"\\/\"}}"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\U0001F600\uFFFDx\uFFFD\u00e9"; m.Target != want {
		t.Errorf("target = %q, want %q", m.Target, want)
	}
	if want := map[string]string{"\n": "/"}; !reflect.DeepEqual(m.Headers, want) {
		t.Errorf("headers = %q, want %q", m.Headers, want)
	}
}

// TestJSONParseValuesOwnTheirBytes shows that raw values survive the reuse
// of the read buffer and cannot overwrite one another when appended to.
func TestJSONParseValuesOwnTheirBytes(t *testing.T) {
	record := []byte(`{"type":3,"invocationId":"1","result":[1, 2]}`)
	m, err := parseJSONMessage(record)
	if err != nil {
		t.Fatal(err)
	}
	copy(record, strings.Repeat("x", len(record)))
	if string(m.Result) != `[1, 2]` {
		t.Errorf("result = %q after the record was overwritten", m.Result)
	}
	m, err = parseJSONMessage([]byte(`{"type":1,"target":"t","arguments":["a","b"],"item":7}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = append(m.Arguments[0], "zzz"...)
	if string(m.Arguments[1]) != `"b"` || string(m.Item) != `7` {
		t.Errorf("appending to one argument changed the others: %q, item %q", m.Arguments, m.Item)
	}
}

// FuzzJSONParseMatchesEncodingJSON checks parseJSONMessage against the
// encoding/json decoder on arbitrary bytes: same message, same verdict.
func FuzzJSONParseMatchesEncodingJSON(f *testing.F) {
	for _, c := range scannerEdgeCases {
		f.Add([]byte(c))
	}
	for _, record := range jsonProtocolCorpus(f) {
		f.Add(record)
	}
	f.Add([]byte(invocationRecord(2048)))
	f.Fuzz(func(t *testing.T, record []byte) {
		checkMatchesReference(t, record)
	})
}

// jsonProtocolCorpus returns the records of FuzzJSONProtocol's stored
// inputs, split on the record separator.
func jsonProtocolCorpus(tb testing.TB) [][]byte {
	dir := filepath.Join("testdata", "fuzz", "FuzzJSONProtocol")
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var records [][]byte
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) < 2 || lines[0] != "go test fuzz v1" {
			tb.Fatalf("%s is not a fuzz input", e.Name())
		}
		lit := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(lines[1]), "[]byte("), ")")
		data, err := strconv.Unquote(lit)
		if err != nil {
			tb.Fatalf("%s: %v", e.Name(), err)
		}
		for _, r := range strings.Split(data, "\x1e") {
			records = append(records, []byte(r))
		}
	}
	return records
}

// invocationRecord is an echo Invocation carrying a payload object of
// about size bytes, as the load scenarios send.
func invocationRecord(size int) string {
	text := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", size/36+1)[:size-90]
	return `{"type":1,"invocationId":"42","target":"Echo","arguments":[{"run":"r-7f3a","seq":1234,"sentAt":1732900000123456789,"data":"` +
		text + `"}]}`
}

func benchmarkParse(b *testing.B, parse func([]byte) (Message, error)) {
	record := []byte(invocationRecord(2048))
	b.SetBytes(int64(len(record)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(record); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseInvocation2KiB parses one Invocation with a 2 KiB payload.
func BenchmarkParseInvocation2KiB(b *testing.B) { benchmarkParse(b, parseJSONMessage) }

// BenchmarkParseInvocation2KiBEncodingJSON is the same with encoding/json,
// for comparison.
func BenchmarkParseInvocation2KiBEncodingJSON(b *testing.B) {
	benchmarkParse(b, parseJSONMessageReference)
}
