package webpubsub

import (
	"encoding/base64"
	"fmt"
)

// wireNames are the "type" values as the wire spells them, for errors.
var wireNames = [...]string{
	typeJoinGroup:   "joinGroup",
	typeLeaveGroup:  "leaveGroup",
	typeSendToGroup: "sendToGroup",
	typeEvent:       "event",
	typeSequenceAck: "sequenceAck",
	typeAck:         "ack",
	typeMessage:     "message",
	typeSystem:      "system",
}

// required lists, per kind, the members a frame of that kind must hold.
var required = map[Kind][]struct {
	field fieldSet
	name  string
}{
	KindJoinGroup:     {{seenGroup, "group"}},
	KindLeaveGroup:    {{seenGroup, "group"}},
	KindSendToGroup:   {{seenGroup, "group"}, {seenData, "data"}},
	KindEvent:         {{seenEvent, "event"}, {seenData, "data"}},
	KindSequenceAck:   {{seenSequenceID, "sequenceId"}},
	KindAck:           {{seenSuccess, "success"}},
	KindGroupMessage:  {{seenGroup, "group"}, {seenData, "data"}},
	KindServerMessage: {{seenData, "data"}},
	KindConnected:     {{seenConnectionID, "connectionId"}},
}

// finish checks the walked members against the frame's type, keeps only
// the fields of that kind, and reads the data.
func (d *Decoder) finish(f *Frame) error {
	m := &d.members
	kind, err := m.kind(f.Event)
	if err != nil {
		return err
	}
	if kind == KindAck && !f.HasAckID {
		return invalid(`"ack" frame has no "ackId"`)
	}
	for _, r := range required[kind] {
		if m.seen&r.field == 0 {
			return invalid(fmt.Sprintf("%q frame has no %q", wireNames[m.typ], r.name))
		}
	}
	keepFieldsOf(kind, f)
	if carriesData(kind) {
		return d.readData(f)
	}
	return nil
}

func (m *memberState) kind(event string) (Kind, error) {
	switch m.typ {
	case typeNone:
		return 0, invalid(`frame has no "type"`)
	case typeOther:
		return 0, &frameError{msg: "unknown frame type " + quoteLimited(m.other), unknown: true}
	case typeMessage:
		return m.messageKind()
	case typeSystem:
		switch {
		case m.seen&seenEvent == 0:
			return 0, invalid(`"system" frame has no "event"`)
		case event == "connected":
			return KindConnected, nil
		case event == "disconnected":
			return KindDisconnected, nil
		}
		return 0, &frameError{msg: `unknown frame type "system" event ` + quoteLimited(event), unknown: true}
	}
	return simpleKinds[m.typ], nil
}

var simpleKinds = [...]Kind{
	typeJoinGroup:   KindJoinGroup,
	typeLeaveGroup:  KindLeaveGroup,
	typeSendToGroup: KindSendToGroup,
	typeEvent:       KindEvent,
	typeSequenceAck: KindSequenceAck,
	typePing:        KindPing,
	typeAck:         KindAck,
	typePong:        KindPong,
}

func (m *memberState) messageKind() (Kind, error) {
	switch m.from {
	case fromGroup:
		return KindGroupMessage, nil
	case fromServer:
		return KindServerMessage, nil
	case fromNone:
		return 0, invalid(`"message" frame has no "from"`)
	}
	return 0, &frameError{msg: `unknown frame type "message" from ` + quoteLimited(m.other), unknown: true}
}

// keepFieldsOf zeroes the fields that kind does not have, so that a frame
// holds exactly what its kind defines whatever else the peer sent.
func keepFieldsOf(kind Kind, f *Frame) {
	all := *f
	*f = Frame{Kind: kind}
	switch kind {
	case KindJoinGroup, KindLeaveGroup:
		f.Group, f.AckID, f.HasAckID = all.Group, all.AckID, all.HasAckID
	case KindSendToGroup:
		f.Group, f.AckID, f.HasAckID, f.NoEcho = all.Group, all.AckID, all.HasAckID, all.NoEcho
	case KindEvent:
		f.Event, f.AckID, f.HasAckID = all.Event, all.AckID, all.HasAckID
	case KindSequenceAck:
		f.SequenceID = all.SequenceID
	case KindAck:
		f.AckID, f.HasAckID, f.Success, f.Error = all.AckID, true, all.Success, all.Error
		if f.Success {
			f.Error = AckError{}
		}
	case KindGroupMessage:
		f.Group, f.FromUserID, f.SequenceID = all.Group, all.FromUserID, all.SequenceID
	case KindServerMessage:
		f.SequenceID = all.SequenceID
	case KindConnected:
		f.UserID, f.ConnectionID, f.ReconnectionToken = all.UserID, all.ConnectionID, all.ReconnectionToken
	case KindDisconnected:
		f.Message = all.Message
	}
}

// readData sets f.DataType and f.Data from the recorded data value.
func (d *Decoder) readData(f *Frame) error {
	m := &d.members
	if m.dataTypeOther != "" {
		return &frameError{msg: "unknown dataType " + quoteLimited(m.dataTypeOther), unknown: true}
	}
	f.DataType = m.dataType
	if f.DataType == DataTypeJSON {
		f.Data = m.data
		return nil
	}
	if m.data[0] != '"' {
		return invalid(fmt.Sprintf("field \"data\": want string for dataType %q, got %s", f.DataType, jsonKind(m.data[0])))
	}
	text := unescaped(&d.text, m.data[1:len(m.data)-1], m.dataPlain)
	if f.DataType == DataTypeText {
		f.Data = text
		return nil
	}
	return d.decodeBase64(f, text)
}

// decodeBase64 accepts standard base64 with or without padding, as the
// service and Node's Buffer write it.
func (d *Decoder) decodeBase64(f *Frame, text []byte) error {
	enc := base64.StdEncoding
	if len(text)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	if need := enc.DecodedLen(len(text)); cap(d.bin) < need {
		d.bin = make([]byte, need)
	}
	n, err := enc.Decode(d.bin[:cap(d.bin)], text)
	if err != nil {
		return invalid(fmt.Sprintf("field \"data\": invalid base64: %v", err))
	}
	f.Data = d.bin[:n]
	return nil
}
