package webpubsub

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// AppendFrame appends the JSON text of f, as its Kind defines it, to dst.
// Fields the kind does not have are ignored; optional ones that are empty
// are left out. JSON data must be one valid JSON value: the frame is
// checked so that nothing invalid reaches the wire.
func AppendFrame(dst []byte, f *Frame) ([]byte, error) {
	switch f.Kind {
	case KindJoinGroup, KindLeaveGroup, KindSendToGroup, KindEvent, KindSequenceAck, KindPing:
		return appendRequest(dst, f)
	case KindAck:
		return appendAck(dst, f), nil
	case KindGroupMessage, KindServerMessage:
		return appendMessage(dst, f)
	case KindConnected, KindDisconnected:
		return appendSystem(dst, f), nil
	case KindPong:
		return append(dst, `{"type":"pong"}`...), nil
	}
	return dst, fmt.Errorf("webpubsub: cannot encode a frame of kind %v", f.Kind)
}

func appendRequest(dst []byte, f *Frame) ([]byte, error) {
	switch f.Kind {
	case KindJoinGroup:
		dst = jsonscan.AppendQuotedString(append(dst, `{"type":"joinGroup","group":`...), f.Group)
	case KindLeaveGroup:
		dst = jsonscan.AppendQuotedString(append(dst, `{"type":"leaveGroup","group":`...), f.Group)
	case KindSendToGroup:
		dst = jsonscan.AppendQuotedString(append(dst, `{"type":"sendToGroup","group":`...), f.Group)
	case KindEvent:
		dst = jsonscan.AppendQuotedString(append(dst, `{"type":"event","event":`...), f.Event)
	case KindSequenceAck:
		dst = strconv.AppendUint(append(dst, `{"type":"sequenceAck","sequenceId":`...), f.SequenceID, 10)
		return append(dst, '}'), nil
	case KindPing:
		return append(dst, `{"type":"ping"}`...), nil
	}
	if f.HasAckID {
		dst = strconv.AppendUint(append(dst, `,"ackId":`...), f.AckID, 10)
	}
	if f.Kind == KindJoinGroup || f.Kind == KindLeaveGroup {
		return append(dst, '}'), nil
	}
	if f.Kind == KindSendToGroup && f.NoEcho {
		dst = append(dst, `,"noEcho":true`...)
	}
	return appendData(dst, f)
}

func appendAck(dst []byte, f *Frame) []byte {
	dst = strconv.AppendUint(append(dst, `{"type":"ack","ackId":`...), f.AckID, 10)
	if f.Success {
		return append(dst, `,"success":true}`...)
	}
	dst = append(dst, `,"success":false`...)
	if f.Error != (AckError{}) {
		dst = jsonscan.AppendQuotedString(append(dst, `,"error":{"name":`...), f.Error.Name)
		dst = jsonscan.AppendQuotedString(append(dst, `,"message":`...), f.Error.Message)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendMessage(dst []byte, f *Frame) ([]byte, error) {
	if f.Kind == KindGroupMessage {
		dst = jsonscan.AppendQuotedString(append(dst, `{"type":"message","from":"group","group":`...), f.Group)
		if f.FromUserID != "" {
			dst = jsonscan.AppendQuotedString(append(dst, `,"fromUserId":`...), f.FromUserID)
		}
	} else {
		dst = append(dst, `{"type":"message","from":"server"`...)
	}
	if f.SequenceID != 0 {
		dst = strconv.AppendUint(append(dst, `,"sequenceId":`...), f.SequenceID, 10)
	}
	return appendData(dst, f)
}

func appendSystem(dst []byte, f *Frame) []byte {
	if f.Kind == KindDisconnected {
		dst = append(dst, `{"type":"system","event":"disconnected"`...)
		if f.Message != "" {
			dst = jsonscan.AppendQuotedString(append(dst, `,"message":`...), f.Message)
		}
		return append(dst, '}')
	}
	dst = append(dst, `{"type":"system","event":"connected"`...)
	if f.UserID != "" {
		dst = jsonscan.AppendQuotedString(append(dst, `,"userId":`...), f.UserID)
	}
	dst = jsonscan.AppendQuotedString(append(dst, `,"connectionId":`...), f.ConnectionID)
	if f.ReconnectionToken != "" {
		dst = jsonscan.AppendQuotedString(append(dst, `,"reconnectionToken":`...), f.ReconnectionToken)
	}
	return append(dst, '}')
}

// appendData appends the dataType and data members and closes the frame.
func appendData(dst []byte, f *Frame) ([]byte, error) {
	switch f.DataType {
	case DataTypeJSON:
		if err := checkJSONValue(f.Data); err != nil {
			return dst, fmt.Errorf("webpubsub: %v frame data: %w", f.Kind, err)
		}
		dst = append(append(dst, `,"dataType":"json","data":`...), f.Data...)
	case DataTypeText:
		dst = jsonscan.AppendQuoted(append(dst, `,"dataType":"text","data":`...), f.Data)
	case DataTypeBinary:
		dst = append(dst, `,"dataType":"binary","data":"`...)
		dst = append(base64.StdEncoding.AppendEncode(dst, f.Data), '"')
	default:
		return dst, fmt.Errorf("webpubsub: %v frame data: unknown %v", f.Kind, f.DataType)
	}
	return append(dst, '}'), nil
}

var errEmptyJSON = errors.New("empty JSON value")

// checkJSONValue reports whether b is exactly one JSON value, white space
// around it allowed.
func checkJSONValue(b []byte) error {
	s := jsonscan.New(b, maxNesting)
	if s.Peek() == 0 && s.Offset() == len(b) {
		return errEmptyJSON
	}
	_, err := s.SkipValue()
	if s.Peek(); err == nil && s.Offset() < len(b) {
		err = s.Fail("after JSON value")
	}
	if se, ok := err.(*jsonscan.SyntaxError); ok {
		fe := frameSyntaxError(se)
		return fmt.Errorf("invalid JSON: %s at offset %d", fe.msg, fe.Offset)
	}
	return err
}
