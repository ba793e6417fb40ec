package aspnet

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/frames/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeFrameEnvelopes(t *testing.T) {
	const cursor = "d-5B9C7A12-B,3|C,8|D,0"
	cases := map[string]Envelope{
		"server-envelope-init.json":          {Cursor: cursor, HasMessages: true, Initialized: true},
		"server-envelope-keepalive.json":     {},
		"server-envelope-groups.json":        {Cursor: cursor, HasMessages: true, GroupsToken: "CfDJ8Kx1AAAAbGVnaW9u:WyJzbWFsbC0xIl0"},
		"server-envelope-longpolldelay.json": {Cursor: cursor, HasMessages: true, LongPollDelay: 250, HasLongPollDelay: true},
		"server-envelope-reconnect.json":     {Cursor: cursor, HasMessages: true, Reconnect: true},
		"server-envelope-disconnect.json":    {Cursor: cursor, HasMessages: true, Disconnect: true},
		"server-envelope-error.json":         {Error: "The connection was refused by the hub."},
	}
	for name, want := range cases {
		var f Frame
		if err := DecodeFrame(golden(t, name), &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Kind != EnvelopeFrame || !reflect.DeepEqual(f.Envelope, want) {
			t.Errorf("%s: kind %d, %+v; want %+v", name, f.Kind, f.Envelope, want)
		}
		if got := f.Envelope.IsKeepAlive(); got != (name == "server-envelope-keepalive.json") {
			t.Errorf("%s: IsKeepAlive %v", name, got)
		}
	}
}

func TestDecodeFrameMessagesAreHubInvocations(t *testing.T) {
	var f Frame
	if err := DecodeFrame(golden(t, "server-envelope-measure.json"), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Envelope.Messages) != 2 {
		t.Fatalf("%d messages, want 2", len(f.Envelope.Messages))
	}
	var inv Invocation
	if err := DecodeInvocation(f.Envelope.Messages[1], &inv); err != nil {
		t.Fatal(err)
	}
	want := Invocation{Hub: "Signalrbench", Method: "Measure", Args: []jsonText{jsonText("1716200000456"), jsonText(`""`)}}
	if !reflect.DeepEqual(inv, want) {
		t.Fatalf("got %+v, want %+v", inv, want)
	}
}

func TestDecodeFrameResults(t *testing.T) {
	cases := map[string]HubResult{
		"server-result-value.json":        {ID: "0", Result: jsonText(`"3a1f0c2e-6b3d-4f7e-9d2a-5c8b1e0f4a77"`)},
		"server-result-void.json":         {ID: "1"},
		"server-result-error.json":        {ID: "2", Error: "There was an error invoking Hub method 'signalrbench.Nope'.", HasError: true},
		"server-result-hubexception.json": {ID: "3", HubException: true, Error: "group name too long", HasError: true, ErrorData: jsonText(`{"limit":64}`)},
		"server-result-progress.json":     {ID: "P|4", ProgressID: "4", ProgressData: jsonText("50"), HasProgress: true},
		"server-result-state.json":        {ID: "5", State: jsonText(`{"name":"probe"}`), Result: jsonText("7")},
	}
	for name, want := range cases {
		var f Frame
		if err := DecodeFrame(golden(t, name), &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Kind != ResultFrame || !reflect.DeepEqual(f.Result, want) {
			t.Errorf("%s: kind %d, %+v; want %+v", name, f.Kind, f.Result, want)
		}
	}
	if ProgressID("4") != "P|4" {
		t.Fatalf("ProgressID(4) = %q", ProgressID("4"))
	}
}

func TestDecodeInvocationFromTheJavaScriptClient(t *testing.T) {
	var inv Invocation
	if err := DecodeInvocation(golden(t, "client-invocation-state.json"), &inv); err != nil {
		t.Fatal(err)
	}
	want := Invocation{
		Hub: "signalrbench", Method: "GroupBroadcast",
		Args: []jsonText{jsonText(`"small-1"`), jsonText("1716200000789"), jsonText(`"eA=="`)},
		ID:   "12", HasID: true, NumericID: true, State: jsonText(`{"name":"probe"}`),
	}
	if !reflect.DeepEqual(inv, want) {
		t.Fatalf("got %+v, want %+v", inv, want)
	}
}

func TestDecodeRejectsBadFrames(t *testing.T) {
	bad := map[string]string{
		"not JSON":             `{"C":`,
		"not an object":        `[1]`,
		"trailing bytes":       `{} {}`,
		"cursor not a string":  `{"C":5,"M":[]}`,
		"messages not array":   `{"C":"x","M":{}}`,
		"init not 1":           `{"C":"x","S":true,"M":[]}`,
		"reconnect not 1":      `{"T":2}`,
		"delay not whole":      `{"L":1.5}`,
		"delay negative":       `{"L":-1}`,
		"groups not string":    `{"G":[]}`,
		"error not string":     `{"E":1}`,
		"id of wrong kind":     `{"I":true}`,
		"progress not object":  `{"I":"P|1","P":3}`,
		"hub exception string": `{"I":"1","H":"yes"}`,
	}
	for name, in := range bad {
		var f Frame
		err := DecodeFrame([]byte(in), &f)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %q gave %v, want ErrProtocol", name, in, err)
		}
	}
}

func TestDecodeInvocationRejects(t *testing.T) {
	for _, in := range []string{`{"M":"Echo","A":[]}`, `{"H":"hub","A":[]}`, `{"H":"hub","M":"x","A":"no"}`, `{"H":1,"M":"x"}`} {
		var inv Invocation
		if err := DecodeInvocation([]byte(in), &inv); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q gave %v, want ErrProtocol", in, err)
		}
	}
	var r HubResult
	if err := DecodeHubResult([]byte(`{"R":1}`), &r); !errors.Is(err, ErrProtocol) {
		t.Errorf("a result without I gave %v", err)
	}
}

func TestDecodeFrameMatchesNamesAsTheClientDoes(t *testing.T) {
	var f Frame
	// An escaped name is the same name; a lowercase one is not.
	if err := DecodeFrame([]byte(`{"\u0043":"cur","c":"other","M":[1],"Cursor":"x"}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.Envelope.Cursor != "cur" || len(f.Envelope.Messages) != 1 {
		t.Fatalf("got %+v", f.Envelope)
	}
	// A name given twice keeps the later value.
	if err := DecodeFrame([]byte(`{"C":"a","C":"b"}`), &f); err != nil || f.Envelope.Cursor != "b" {
		t.Fatalf("got %+v, %v", f.Envelope, err)
	}
}

func TestDecodeFrameReusesMessageCapacity(t *testing.T) {
	in := golden(t, "server-envelope-measure.json")
	var f Frame
	if err := DecodeFrame(in, &f); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := DecodeFrame(in, &f); err != nil {
			t.Fatal(err)
		}
	})
	// The cursor, a string the caller keeps, is the one allocation.
	if allocs > 1 {
		t.Fatalf("DecodeFrame made %.0f allocations per frame, want at most 1", allocs)
	}
	buf := make([]byte, 0, 512)
	if allocs := testing.AllocsPerRun(100, func() { buf = AppendEnvelope(buf[:0], &f.Envelope) }); allocs != 0 {
		t.Fatalf("AppendEnvelope made %.0f allocations", allocs)
	}
}

func TestNegotiateChecks(t *testing.T) {
	cases := []struct {
		in   string
		want error
	}{
		{`{"Url":"/signalr","ConnectionToken":"t","ConnectionId":"i","ProtocolVersion":"1.4"}`, ErrProtocolVersion},
		{`{"Url":"/signalr","ConnectionToken":"t","ConnectionId":"i"}`, ErrProtocolVersion},
		{`{"negotiateVersion":1,"connectionId":"x","availableTransports":[]}`, ErrProtocol},
		{`{"ProtocolVersion":"2.0","Error":"app is down"}`, ErrProtocol},
		{`{"ProtocolVersion":"2.0","Url":"/signalr"}`, ErrProtocol},
		{`<html>`, ErrProtocol},
		{`{"ProtocolVersion":"2.0",`, ErrProtocol},
		{`{"Url":"/signalr","ConnectionToken":"t","ConnectionId":"i","ProtocolVersion":"1.5"}`, nil},
	}
	for _, tc := range cases {
		_, err := DecodeNegotiate([]byte(tc.in))
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: got %v, want %v", tc.in, err, tc.want)
		}
	}
	n, err := DecodeNegotiate(golden(t, "server-negotiate.json"))
	if err != nil || *n.KeepAliveTimeout != 20 || n.ConnectionTimeout != 110 || !n.TryWebSockets || n.IsRedirect() {
		t.Fatalf("got %+v, %v", n, err)
	}
	_, err = DecodeNegotiate([]byte(`{"Url":"/s","ConnectionToken":"t","ConnectionId":"i","ProtocolVersion":"9.9"}`))
	if err == nil || !strings.Contains(err.Error(), `"9.9"`) {
		t.Fatalf("a wrong version's error must name it: %v", err)
	}
}

func TestStartAndPingAnswers(t *testing.T) {
	if err := CheckStartResponse([]byte(`{"Response":"started"}`)); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{"Response":"pong"}`, `{}`, `started`, `{"Response":"started"`} {
		if err := CheckStartResponse([]byte(in)); !errors.Is(err, ErrProtocol) {
			t.Errorf("start answer %q gave %v", in, err)
		}
	}
	if err := CheckPingResponse([]byte(StartResponse)); !errors.Is(err, ErrProtocol) {
		t.Fatalf("a start answer to a ping gave %v", err)
	}
}

func TestConnectionData(t *testing.T) {
	if got := string(AppendConnectionData(nil, "Signalrbench", "Other")); got != `[{"name":"signalrbench"},{"name":"other"}]` {
		t.Fatalf("got %s", got)
	}
	hubs, err := DecodeConnectionData([]byte(`[{"Name":"Signalrbench"}]`))
	if err != nil || !reflect.DeepEqual(hubs, []string{"Signalrbench"}) {
		t.Fatalf("got %v, %v", hubs, err)
	}
	for _, in := range []string{`{"name":"x"}`, `[{"hub":"x"}]`, `[1]`, `[{"name":"x"}`} {
		if _, err := DecodeConnectionData([]byte(in)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q gave %v", in, err)
		}
	}
}

func TestParseTransport(t *testing.T) {
	for _, tr := range Transports {
		if got, err := ParseTransport(string(tr)); got != tr || err != nil {
			t.Fatalf("%s: %v %v", tr, got, err)
		}
	}
	if _, err := ParseTransport("websockets"); !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v", err)
	}
}

// An invocation decoded into the space of the last one takes the last
// one's hub and method names when they are the same text, without a copy,
// and decodes as a fresh one would whatever the names.
func TestDecodeInvocationReusesRepeatedNames(t *testing.T) {
	var inv Invocation
	frames := []string{
		`{"H":"Signalrbench","M":"Measure","A":[1,"a"]}`,
		`{"H":"Signalrbench","M":"Measure","A":[2,"b"]}`,
		`{"H":"Signalrbench","M":"Meas\u0075re","A":[3]}`, // same value, escaped
		`{"H":"Sig\\nalrbench","M":"Echo","A":[4]}`,       // a backslash and an n
		`{"H":"Sig\nalrbench","M":"Echo","A":[5]}`,        // the last hub's text, whose value is another
	}
	for _, frame := range frames {
		var fresh Invocation
		if err := DecodeInvocation([]byte(frame), &fresh); err != nil {
			t.Fatal(err)
		}
		if err := DecodeInvocation([]byte(frame), &inv); err != nil || !reflect.DeepEqual(inv, fresh) {
			t.Fatalf("%s decoded after another as %+v, %v; fresh %+v", frame, inv, err, fresh)
		}
	}
	measure := []byte(frames[0])
	if n := testing.AllocsPerRun(100, func() { _ = DecodeInvocation(measure, &inv) }); n != 0 {
		t.Errorf("decoding the same invocation again allocates %v times, want 0", n)
	}
}
