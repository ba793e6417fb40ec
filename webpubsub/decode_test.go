package webpubsub

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// equalFrames compares two frames, Data by content (nil and empty alike).
func equalFrames(a, b *Frame) bool {
	x, y := *a, *b
	x.Data, y.Data = nil, nil
	return reflect.DeepEqual(x, y) && bytes.Equal(a.Data, b.Data)
}

// sameFrame compares two frames, Data by content (nil and empty alike).
func sameFrame(t *testing.T, got, want Frame) {
	t.Helper()
	if !equalFrames(&got, &want) {
		t.Errorf("got  %+v data %q\nwant %+v data %q", got, got.Data, want, want.Data)
	}
}

var decodeCases = []struct {
	name, in string
	want     Frame
}{
	{"joinGroup", `{"type":"joinGroup","group":"g1","ackId":1}`,
		Frame{Kind: KindJoinGroup, Group: "g1", AckID: 1, HasAckID: true}},
	{"leaveGroup without ackId", `{"type":"leaveGroup","group":"g1"}`,
		Frame{Kind: KindLeaveGroup, Group: "g1"}},
	{"sendToGroup as the SDK writes it", `{"type":"sendToGroup","group":"g","ackId":7,"dataType":"json","data":{"a":[1,2.5e3,null,true]},"noEcho":true}`,
		Frame{Kind: KindSendToGroup, Group: "g", AckID: 7, HasAckID: true, NoEcho: true, DataType: DataTypeJSON, Data: []byte(`{"a":[1,2.5e3,null,true]}`)}},
	{"sendToGroup without dataType is json", `{"type":"sendToGroup","group":"g","data": "just a string" }`,
		Frame{Kind: KindSendToGroup, Group: "g", Data: []byte(`"just a string"`)}},
	{"event text", `{"type":"event","event":"echo","ackId":2,"dataType":"text","data":"hi\nthere \u00e9 \ud83d\ude00"}`,
		Frame{Kind: KindEvent, Event: "echo", AckID: 2, HasAckID: true, DataType: DataTypeText, Data: []byte("hi\nthere é 😀")}},
	{"event binary", `{"type":"event","event":"bin","dataType":"binary","data":"AAEC/w=="}`,
		Frame{Kind: KindEvent, Event: "bin", DataType: DataTypeBinary, Data: []byte{0, 1, 2, 255}}},
	{"binary without padding", `{"type":"event","event":"bin","dataType":"binary","data":"AAEC/w"}`,
		Frame{Kind: KindEvent, Event: "bin", DataType: DataTypeBinary, Data: []byte{0, 1, 2, 255}}},
	{"sequenceAck number", `{"type":"sequenceAck","sequenceId":18446744073709551615}`,
		Frame{Kind: KindSequenceAck, SequenceID: 18446744073709551615}},
	{"sequenceAck quoted as the reference page shows", `{"type":"sequenceAck","sequenceId":"42"}`,
		Frame{Kind: KindSequenceAck, SequenceID: 42}},
	{"ping", `{"type":"ping"}`, Frame{Kind: KindPing}},
	{"pong", ` {"type":"pong"} `, Frame{Kind: KindPong}},
	{"ack success drops a stray error", `{"type":"ack","ackId":3,"success":true,"error":{"name":"X"}}`,
		Frame{Kind: KindAck, AckID: 3, HasAckID: true, Success: true}},
	{"ack duplicate", `{"type":"ack","ackId":3,"success":false,"error":{"name":"Duplicate","message":"Message with ack-id: 3 has been processed","extra":[1]}}`,
		Frame{Kind: KindAck, AckID: 3, HasAckID: true, Error: AckError{Name: ErrorDuplicate, Message: "Message with ack-id: 3 has been processed"}}},
	{"ack failure without error", `{"type":"ack","ackId":0,"success":false,"error":null}`,
		Frame{Kind: KindAck, AckID: 0, HasAckID: true}},
	{"reliable group message, sequenceId first", `{"sequenceId":1,"type":"message","from":"group","group":"g","dataType":"json","data":{"hello":"world"},"fromUserId":"abc"}`,
		Frame{Kind: KindGroupMessage, Group: "g", FromUserID: "abc", SequenceID: 1, Data: []byte(`{"hello":"world"}`)}},
	{"server message, data before dataType", `{"type":"message","data":"SGVsbG8=","from":"server","dataType":"binary"}`,
		Frame{Kind: KindServerMessage, DataType: DataTypeBinary, Data: []byte("Hello")}},
	{"server message text", `{"type":"message","from":"server","dataType":"text","data":"Hello World"}`,
		Frame{Kind: KindServerMessage, DataType: DataTypeText, Data: []byte("Hello World")}},
	{"server message json null data", `{"type":"message","from":"server","dataType":"json","data":null}`,
		Frame{Kind: KindServerMessage, Data: []byte(`null`)}},
	{"connected with null userId", `{"type":"system","event":"connected","userId":null,"connectionId":"abcdefghijklmnop","reconnectionToken":"tok"}`,
		Frame{Kind: KindConnected, ConnectionID: "abcdefghijklmnop", ReconnectionToken: "tok"}},
	{"connected", `{"type":"system","event":"connected","userId":"user1","connectionId":"c1"}`,
		Frame{Kind: KindConnected, UserID: "user1", ConnectionID: "c1"}},
	{"disconnected", `{"type":"system","event":"disconnected","message":"Connection count reaches limit"}`,
		Frame{Kind: KindDisconnected, Message: "Connection count reaches limit"}},
	{"escaped names and values", `{"typ\u0065":"join\u0047roup","gro\u0075p":"a\"b\\c\/d"}`,
		Frame{Kind: KindJoinGroup, Group: `a"b\c/d`}},
	{"unknown members skipped, last duplicate wins", `{"type":"leaveGroup","x":{"y":[{},[]]},"group":"first","group":"second"}`,
		Frame{Kind: KindLeaveGroup, Group: "second"}},
	{"members of other kinds are dropped", `{"type":"joinGroup","group":"g","event":"e","data":1,"connectionId":"c","sequenceId":9}`,
		Frame{Kind: KindJoinGroup, Group: "g"}},
}

func TestDecodeFrames(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.in))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			sameFrame(t, got, tc.want)
		})
	}
}

var longType = strings.Repeat("x", 100)

var decodeErrorCases = []struct {
	name, in, want string
	unknown        bool
}{
	{"empty", ``, `webpubsub: invalid frame: unexpected end of frame at offset 0`, false},
	{"garbage", "\x00\xff", `webpubsub: invalid frame: invalid character '\x00' looking for beginning of value at offset 0`, false},
	{"not an object", `[1,2]`, `webpubsub: invalid frame: frame is not a JSON object`, false},
	{"numbers", `0 0`, `webpubsub: invalid frame: invalid character '0' after top-level value at offset 2`, false},
	{"truncated", `{"type":"ack","ackId":1`, `webpubsub: invalid frame: unexpected end of frame at offset 23`, false},
	{"trailing bytes", `{"type":"ping"}{}`, `webpubsub: invalid frame: invalid character '{' after top-level value at offset 15`, false},
	{"bad escape", `{"type":"p\x"}`, `webpubsub: invalid frame: invalid character 'x' in string escape code at offset 11`, false},
	{"control byte in string", "{\"type\":\"p\ning\"}", `webpubsub: invalid frame: invalid character '\n' in string literal at offset 10`, false},
	{"bad number in data", `{"type":"event","event":"e","data":01}`, `webpubsub: invalid frame: invalid character '1' after object key:value pair at offset 36`, false},
	{"no type", `{"group":"g"}`, `webpubsub: invalid frame: frame has no "type"`, false},
	{"null type", `{"type":null}`, `webpubsub: invalid frame: frame has no "type"`, false},
	{"type not a string", `{"type":1}`, `webpubsub: invalid frame: field "type": want string, got number`, false},
	{"bad JSON wins over a wrong member", `{"group":1,"x":}`, `webpubsub: invalid frame: invalid character '}' looking for beginning of value at offset 15`, false},
	{"first wrong member wins", `{"type":"ack","ackId":"1","success":2}`, `webpubsub: invalid frame: field "ackId": want unsigned integer, got string`, false},
	{"unknown type", `{"type":"invokeResponse","invocationId":"1"}`, `webpubsub: invalid frame: unknown frame type "invokeResponse"`, true},
	{"unknown type truncated", `{"type":"` + longType + `"}`, `webpubsub: invalid frame: unknown frame type "` + longType[:40] + `"…`, true},
	{"unknown type cut by its quoted length", `{"type":"` + strings.Repeat("\xb8", 30) + `"}`, `webpubsub: invalid frame: unknown frame type "` + strings.Repeat(`\xb8`, 10) + `"…`, true},
	{"unknown type quoted", `{"type":"a\u0000\"b"}`, `webpubsub: invalid frame: unknown frame type "a\x00\"b"`, true},
	{"unknown source", `{"type":"message","from":"stream","data":1}`, `webpubsub: invalid frame: unknown frame type "message" from "stream"`, true},
	{"unknown system event", `{"type":"system","event":"reconnecting"}`, `webpubsub: invalid frame: unknown frame type "system" event "reconnecting"`, true},
	{"unknown dataType", `{"type":"message","from":"server","dataType":"protobuf","data":"AA=="}`, `webpubsub: invalid frame: unknown dataType "protobuf"`, true},
	{"message without from", `{"type":"message","data":1}`, `webpubsub: invalid frame: "message" frame has no "from"`, false},
	{"system without event", `{"type":"system"}`, `webpubsub: invalid frame: "system" frame has no "event"`, false},
	{"join without group", `{"type":"joinGroup","ackId":1}`, `webpubsub: invalid frame: "joinGroup" frame has no "group"`, false},
	{"null group is absent", `{"type":"joinGroup","group":null}`, `webpubsub: invalid frame: "joinGroup" frame has no "group"`, false},
	{"send without data", `{"type":"sendToGroup","group":"g"}`, `webpubsub: invalid frame: "sendToGroup" frame has no "data"`, false},
	{"event without event", `{"type":"event","data":1}`, `webpubsub: invalid frame: "event" frame has no "event"`, false},
	{"group message without group", `{"type":"message","from":"group","data":1}`, `webpubsub: invalid frame: "message" frame has no "group"`, false},
	{"server message without data", `{"type":"message","from":"server"}`, `webpubsub: invalid frame: "message" frame has no "data"`, false},
	{"ack without ackId", `{"type":"ack","success":true}`, `webpubsub: invalid frame: "ack" frame has no "ackId"`, false},
	{"ack without success", `{"type":"ack","ackId":1}`, `webpubsub: invalid frame: "ack" frame has no "success"`, false},
	{"ack success not bool", `{"type":"ack","ackId":1,"success":"true"}`, `webpubsub: invalid frame: field "success": want boolean, got string`, false},
	{"ack error not an object", `{"type":"ack","ackId":1,"success":false,"error":"Forbidden"}`, `webpubsub: invalid frame: field "error": want object, got string`, false},
	{"ack error name not a string", `{"type":"ack","ackId":1,"success":false,"error":{"name":5}}`, `webpubsub: invalid frame: field "error.name": want string, got number`, false},
	{"connected without connectionId", `{"type":"system","event":"connected","userId":"u"}`, `webpubsub: invalid frame: "system" frame has no "connectionId"`, false},
	{"sequenceAck without id", `{"type":"sequenceAck"}`, `webpubsub: invalid frame: "sequenceAck" frame has no "sequenceId"`, false},
	{"negative ackId", `{"type":"ack","ackId":-1,"success":true}`, `webpubsub: invalid frame: field "ackId": "-1" is not an unsigned 64-bit integer`, false},
	{"fractional ackId", `{"type":"ack","ackId":1.0,"success":true}`, `webpubsub: invalid frame: field "ackId": "1.0" is not an unsigned 64-bit integer`, false},
	{"ackId too large", `{"type":"ack","ackId":18446744073709551616,"success":true}`, `webpubsub: invalid frame: field "ackId": "18446744073709551616" is not an unsigned 64-bit integer`, false},
	{"quoted ackId", `{"type":"ack","ackId":"1","success":true}`, `webpubsub: invalid frame: field "ackId": want unsigned integer, got string`, false},
	{"quoted sequenceId not digits", `{"type":"sequenceAck","sequenceId":"-4"}`, `webpubsub: invalid frame: field "sequenceId": "-4" is not an unsigned 64-bit integer`, false},
	{"text data not a string", `{"type":"event","event":"e","dataType":"text","data":{"a":1}}`, `webpubsub: invalid frame: field "data": want string for dataType "text", got object`, false},
	{"bad base64", `{"type":"event","event":"e","dataType":"binary","data":"AA*="}`, `webpubsub: invalid frame: field "data": invalid base64: illegal base64 data at input byte 2`, false},
	{"nesting too deep", `{"type":"event","event":"e","data":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, `webpubsub: invalid frame: nesting deeper than 1000 at offset 1035`, false},
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range decodeErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if err == nil {
				t.Fatal("Decode succeeded")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			if !errors.Is(err, ErrInvalidFrame) {
				t.Errorf("error %v does not wrap ErrInvalidFrame", err)
			}
			if errors.Is(err, ErrUnknownType) != tc.unknown {
				t.Errorf("errors.Is(err, ErrUnknownType) = %v, want %v", !tc.unknown, tc.unknown)
			}
		})
	}
}

// A Decoder reused across frames allocates nothing once its buffers and
// name caches are warm, whatever the data type: receiving is the hot path.
func TestDecoderSteadyStateAllocatesNothing(t *testing.T) {
	frames := [][]byte{
		[]byte(`{"sequenceId":9,"type":"message","from":"group","group":"g","fromUserId":"u","dataType":"json","data":{"k":"v"}}`),
		[]byte(`{"type":"message","from":"group","group":"g","fromUserId":"u","dataType":"text","data":"line\nbreak"}`),
		[]byte(`{"type":"message","from":"group","group":"g","fromUserId":"u","dataType":"binary","data":"AAECAw=="}`),
		[]byte(`{"type":"ack","ackId":12,"success":true}`),
	}
	var d Decoder
	var f Frame
	for _, frame := range frames {
		if err := d.Decode(frame, &f); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, frame := range frames {
			if err := d.Decode(frame, &f); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocated %v times per 4 frames, want 0", allocs)
	}
}

// Data aliases the input for JSON data and the Decoder's buffer for
// escaped text, as Frame.Data documents.
func TestDecodeDataAliasing(t *testing.T) {
	in := []byte(`{"type":"message","from":"server","data":{"n":1}}`)
	var d Decoder
	var f Frame
	if err := d.Decode(in, &f); err != nil {
		t.Fatal(err)
	}
	in[len(in)-3] = '2'
	if string(f.Data) != `{"n":2}` {
		t.Errorf("json data %q does not alias the input", f.Data)
	}
	if err := d.Decode([]byte(`{"type":"message","from":"server","dataType":"text","data":"a\tb"}`), &f); err != nil {
		t.Fatal(err)
	}
	text := f.Data
	if err := d.Decode([]byte(`{"type":"message","from":"server","dataType":"text","data":"c\td"}`), &f); err != nil {
		t.Fatal(err)
	}
	if string(text) != "c\td" || string(f.Data) != "c\td" {
		t.Errorf("escaped text: first %q, second %q; want both to share the buffer", text, f.Data)
	}
}
