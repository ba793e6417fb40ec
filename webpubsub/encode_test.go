package webpubsub

import (
	"encoding/json"
	"testing"
)

func TestAppendFrame(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Frame
		want string
	}{
		{"joinGroup", Frame{Kind: KindJoinGroup, Group: "g", AckID: 1, HasAckID: true},
			`{"type":"joinGroup","group":"g","ackId":1}`},
		{"leaveGroup fire and forget", Frame{Kind: KindLeaveGroup, Group: "g", AckID: 5},
			`{"type":"leaveGroup","group":"g"}`},
		{"sendToGroup json noEcho", Frame{Kind: KindSendToGroup, Group: "g", AckID: 2, HasAckID: true, NoEcho: true, Data: []byte(` {"a": 1} `)},
			`{"type":"sendToGroup","group":"g","ackId":2,"noEcho":true,"dataType":"json","data": {"a": 1} }`},
		{"sendToGroup text", Frame{Kind: KindSendToGroup, Group: "g", DataType: DataTypeText, Data: []byte("a\"b\\c\x01\n\u2028é\xff")},
			// The invalid byte becomes U+FFFD itself, as the one JSON writer writes it.
			`{"type":"sendToGroup","group":"g","dataType":"text","data":"a\"b\\c\u0001\n\u2028é` + "\ufffd" + `"}`},
		{"event binary", Frame{Kind: KindEvent, Event: "echo", AckID: 3, HasAckID: true, DataType: DataTypeBinary, Data: []byte{0, 1, 2, 255}},
			`{"type":"event","event":"echo","ackId":3,"dataType":"binary","data":"AAEC/w=="}`},
		{"sequenceAck", Frame{Kind: KindSequenceAck, SequenceID: 18446744073709551615},
			`{"type":"sequenceAck","sequenceId":18446744073709551615}`},
		{"ping", Frame{Kind: KindPing, Group: "ignored"}, `{"type":"ping"}`},
		{"pong", Frame{Kind: KindPong}, `{"type":"pong"}`},
		{"ack success", Frame{Kind: KindAck, AckID: 9, Success: true, Error: AckError{Name: "ignored"}},
			`{"type":"ack","ackId":9,"success":true}`},
		{"ack forbidden", Frame{Kind: KindAck, AckID: 9, Error: AckError{Name: ErrorForbidden, Message: "no role"}},
			`{"type":"ack","ackId":9,"success":false,"error":{"name":"Forbidden","message":"no role"}}`},
		{"ack failure without error", Frame{Kind: KindAck, AckID: 9}, `{"type":"ack","ackId":9,"success":false}`},
		{"group message reliable", Frame{Kind: KindGroupMessage, Group: "g", FromUserID: "u", SequenceID: 4, Data: []byte(`[1]`)},
			`{"type":"message","from":"group","group":"g","fromUserId":"u","sequenceId":4,"dataType":"json","data":[1]}`},
		{"server message text", Frame{Kind: KindServerMessage, DataType: DataTypeText, Data: []byte("Hello World")},
			`{"type":"message","from":"server","dataType":"text","data":"Hello World"}`},
		{"connected", Frame{Kind: KindConnected, UserID: "u", ConnectionID: "c", ReconnectionToken: "t"},
			`{"type":"system","event":"connected","userId":"u","connectionId":"c","reconnectionToken":"t"}`},
		{"connected anonymous", Frame{Kind: KindConnected, ConnectionID: "c"},
			`{"type":"system","event":"connected","connectionId":"c"}`},
		{"disconnected", Frame{Kind: KindDisconnected, Message: "bye"}, `{"type":"system","event":"disconnected","message":"bye"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendFrame([]byte("prefix"), &tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix"+tc.want {
				t.Errorf("got  %s\nwant prefix%s", got, tc.want)
			}
			if !json.Valid(got[len("prefix"):]) {
				t.Errorf("%s is not valid JSON", got)
			}
		})
	}
}

func TestAppendFrameErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Frame
		want string
	}{
		{"unknown kind", Frame{}, `webpubsub: cannot encode a frame of kind unknown`},
		{"out of range kind", Frame{Kind: 99}, `webpubsub: cannot encode a frame of kind Kind(99)`},
		{"empty json data", Frame{Kind: KindSendToGroup, Group: "g", Data: []byte(" ")},
			`webpubsub: sendToGroup frame data: empty JSON value`},
		{"invalid json data", Frame{Kind: KindEvent, Event: "e", Data: []byte(`{"a":}`)},
			`webpubsub: event frame data: invalid JSON: invalid character '}' looking for beginning of value at offset 5`},
		{"two json values", Frame{Kind: KindServerMessage, Data: []byte(`1 2`)},
			`webpubsub: message from server frame data: invalid JSON: invalid character '2' after JSON value at offset 2`},
		{"unknown data type", Frame{Kind: KindGroupMessage, Group: "g", DataType: 7},
			`webpubsub: message from group frame data: unknown DataType(7)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := AppendFrame([]byte("keep"), &tc.f)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got %v\nwant %s", err, tc.want)
			}
			if len(out) < 4 || string(out[:4]) != "keep" {
				t.Errorf("dst lost its content: %q", out)
			}
		})
	}
}

// Every frame AppendFrame writes decodes back to the same frame.
func TestRoundTrip(t *testing.T) {
	frames := []Frame{
		{Kind: KindJoinGroup, Group: "g\u00e9", AckID: 1, HasAckID: true},
		{Kind: KindLeaveGroup, Group: "g"},
		{Kind: KindSendToGroup, Group: "g", NoEcho: true, Data: []byte(`{"x":"\u0000"}`)},
		{Kind: KindSendToGroup, Group: "g", AckID: 1<<64 - 1, HasAckID: true, DataType: DataTypeText, Data: []byte("tab\there \"q\" 😀")},
		{Kind: KindEvent, Event: "e", DataType: DataTypeBinary, Data: []byte{0xff, 0, 0x7f}},
		{Kind: KindEvent, Event: "e", DataType: DataTypeBinary, Data: []byte{}},
		{Kind: KindSequenceAck, SequenceID: 77},
		{Kind: KindPing},
		{Kind: KindPong},
		{Kind: KindAck, AckID: 4, HasAckID: true, Success: true},
		{Kind: KindAck, AckID: 4, HasAckID: true, Error: AckError{Name: ErrorInternalServerError, Message: "retry"}},
		{Kind: KindGroupMessage, Group: "g", FromUserID: "u", SequenceID: 2, Data: []byte(`"s"`)},
		{Kind: KindServerMessage, DataType: DataTypeText, Data: []byte("")},
		{Kind: KindConnected, UserID: "u", ConnectionID: "c", ReconnectionToken: "r"},
		{Kind: KindDisconnected, Message: "m"},
		{Kind: KindDisconnected},
	}
	var d Decoder
	for _, want := range frames {
		b, err := AppendFrame(nil, &want)
		if err != nil {
			t.Fatalf("%v: %v", want.Kind, err)
		}
		var got Frame
		if err := d.Decode(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !equalFrames(&got, &want) {
			t.Errorf("%s\n got %+v\nwant %+v", b, got, want)
		}
	}
}
