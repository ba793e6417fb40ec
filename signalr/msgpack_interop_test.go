package signalr

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The official @microsoft/signalr-protocol-msgpack (pinned in
// testdata/msgpackjs/package-lock.json) checks the byte format from the
// outside, in both directions.
const msgpackJSDir = "testdata/msgpackjs"

func runMsgpackJS(t *testing.T, mode string, stdin []byte) []byte {
	t.Helper()
	mpEnsureNodeModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "codec.mjs", mode)
	cmd.Dir = msgpackJSDir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node codec.mjs %s: %v\n%s", mode, err, stderr.String())
	}
	return stdout.Bytes()
}

func mpEnsureNodeModules(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for this test: %v", tool, err)
		}
	}
	if _, err := os.Stat(filepath.Join(msgpackJSDir, "node_modules", "@microsoft", "signalr-protocol-msgpack")); err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = msgpackJSDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
}

// TestMessagePackReadsOfficialJSEncoding parses what the official client
// writes, and checks that hubprobe writes the same bytes for the same
// message wherever both sides have the same value types.
func TestMessagePackReadsOfficialJSEncoding(t *testing.T) {
	var out struct {
		Version  int               `json:"version"`
		Messages map[string]string `json:"messages"`
	}
	if err := json.Unmarshal(runMsgpackJS(t, "encode", nil), &out); err != nil {
		t.Fatal(err)
	}
	t.Logf("official protocol announces version %d; hubprobe announces 1, which servers accept", out.Version)
	payload := `{"payload.Run":"r1","payload.MessageBlob":"` + strings.Repeat("x", 2048) + `","payload.Timestamp":1234567}`
	cases := []struct {
		name      string
		want      Message
		sameBytes bool
	}{
		{"invocation", Message{Type: InvocationType, InvocationID: "1", Target: "Echo", Arguments: mpArgs(`"conn"`, payload)}, true},
		{"nonBlocking", Message{Type: InvocationType, Target: "Send", Arguments: mpArgs(`42`, `-7`, `1.5`, `true`, `false`, `null`)}, true},
		{"headers", Message{Type: InvocationType, InvocationID: "2", Target: "H", Arguments: []json.RawMessage{},
			StreamIDs: []string{"3", "4"}, Headers: map[string]string{"k": "v"}}, true},
		{"values", Message{Type: InvocationType, InvocationID: "5", Target: "Values", Arguments: mpArgs(
			`{"nested":{"deeper":[1,[2,[3]],{}]},"empty":[]}`, `"héllo ☃ 😀 \"quoted\" \\ \n\t\u0001"`,
			`-1`, `-32`, `-33`, `-128`, `-129`, `-32768`, `-32769`, `-2147483648`, `-2147483649`,
			`127`, `128`, `255`, `256`, `65535`, `65536`, `4294967295`, `4294967296`, `9007199254740991`,
			`0.1`, `-2.5e-10`, `1e+300`, `"`+strings.Repeat("é", 40)+`"`, `""`)}, true},
		{"streamInvocation", Message{Type: StreamInvocationType, InvocationID: "6", Target: "Count", Arguments: mpArgs(`3`)}, true},
		{"streamItem", Message{Type: StreamItemType, InvocationID: "6", Item: json.RawMessage(`{"v":[1,2]}`)}, true},
		{"completionResult", Message{Type: CompletionType, InvocationID: "1", Result: json.RawMessage(`"ok"`)}, true},
		{"completionError", Message{Type: CompletionType, InvocationID: "1", Error: "boom", HasError: true}, true},
		{"completionVoid", Message{Type: CompletionType, InvocationID: "1"}, true},
		{"cancel", Message{Type: CancelInvocationType, InvocationID: "6"}, true},
		{"ping", Message{Type: PingType}, true},
		{"close", Message{Type: CloseType}, true},
		{"ack", Message{Type: AckType, SequenceID: 300}, true},
		{"sequence", Message{Type: SequenceType, SequenceID: 70000}, true},
		{"binary", Message{Type: StreamItemType, InvocationID: "7", Item: json.RawMessage(`"AAEC/f7/"`)}, false},
		{"date", Message{Type: StreamItemType, InvocationID: "8", Item: json.RawMessage(`"2024-05-01T12:00:00.5Z"`)}, false},
	}
	if len(out.Messages) != len(cases) {
		t.Errorf("script wrote %d messages, test knows %d", len(out.Messages), len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wire, err := hex.DecodeString(out.Messages[tc.name])
			if err != nil || len(wire) == 0 {
				t.Fatalf("no bytes for %q (%v)", tc.name, err)
			}
			got := mpParseAll(t, wire)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Fatalf("parsed %+v\nwant   %+v", got, tc.want)
			}
			if ours := mpEncode(t, tc.want); tc.sameBytes && !bytes.Equal(ours, wire) {
				t.Errorf("hubprobe writes % x\n official writes % x", ours, wire)
			}
		})
	}
}

// TestMessagePackOfficialJSReadsOurEncoding has the official client parse
// what hubprobe writes for every message a server sends to a client.
func TestMessagePackOfficialJSReadsOurEncoding(t *testing.T) {
	payload := `{"payload.Run":"r1","payload.MessageBlob":"` + strings.Repeat("Zm9v", 512) + `","payload.Timestamp":1234567}`
	cases := []struct {
		name string
		msgs []Message
		js   string // what the client's parseMessages returns, as JSON
	}{
		{"invocation", []Message{{Type: InvocationType, InvocationID: "1", Target: "Echo", Arguments: mpArgs(`"conn"`, payload)}},
			`[{"type":1,"headers":{},"invocationId":"1","target":"Echo","arguments":["conn",` + payload + `],"streamIds":[]}]`},
		{"non-blocking invocation with values", []Message{{Type: InvocationType, Target: "Send", Headers: map[string]string{"h": "v"}, Arguments: mpArgs(
			`{"a":{"b":[1,-1,1.5,-2.5e-10,1e+300,null,true,false]}}`, `"héllo ☃ 😀 \"q\" \\ \n\u0001"`,
			`4294967296`, `-2147483649`, `9007199254740991`, `-9007199254740991`, `""`, `[]`, `{}`)}},
			`[{"type":1,"headers":{"h":"v"},"target":"Send","streamIds":[],"arguments":[{"a":{"b":[1,-1,1.5,-2.5e-10,1e+300,null,true,false]}},` +
				`"héllo ☃ 😀 \"q\" \\ \n\u0001",4294967296,-2147483649,9007199254740991,-9007199254740991,"",[],{}]}]`},
		{"stream item", []Message{{Type: StreamItemType, InvocationID: "6", Item: json.RawMessage(`[1,{"x":"y"}]`)}},
			`[{"type":2,"headers":{},"invocationId":"6","item":[1,{"x":"y"}]}]`},
		{"completions", []Message{
			{Type: CompletionType, InvocationID: "1", Result: json.RawMessage(`{"ok":true}`)},
			{Type: CompletionType, InvocationID: "2", Result: json.RawMessage(`null`)},
			{Type: CompletionType, InvocationID: "3", Error: "boom", HasError: true},
			{Type: CompletionType, InvocationID: "4"}},
			`[{"type":3,"headers":{},"invocationId":"1","result":{"ok":true}},{"type":3,"headers":{},"invocationId":"2","result":null},` +
				`{"type":3,"headers":{},"invocationId":"3","error":"boom"},{"type":3,"headers":{},"invocationId":"4"}]`},
		{"ping", []Message{{Type: PingType}}, `[{"type":6}]`},
		{"closes", []Message{{Type: CloseType}, {Type: CloseType, Error: "bye", HasError: true, AllowReconnect: true}},
			`[{"type":7,"error":null},{"type":7,"error":"bye","allowReconnect":true}]`},
		{"ack and sequence", []Message{{Type: AckType, SequenceID: 300}, {Type: SequenceType, SequenceID: 1 << 40}},
			`[{"type":8,"sequenceId":300},{"type":9,"sequenceId":1099511627776}]`},
	}
	in := map[string]string{}
	for _, tc := range cases {
		var wire []byte
		for _, m := range tc.msgs {
			wire = append(wire, mpEncode(t, m)...)
		}
		in[tc.name] = hex.EncodeToString(wire)
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(runMsgpackJS(t, "decode", stdin), &out); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		var want any
		if err := json.Unmarshal([]byte(tc.js), &want); err != nil {
			t.Fatalf("%s: bad test JSON: %v", tc.name, err)
		}
		if !reflect.DeepEqual(out[tc.name], want) {
			got, _ := json.Marshal(out[tc.name])
			t.Errorf("%s: official client parsed\n%.400s\nwant\n%.400s", tc.name, got, tc.js)
		}
	}
}
