// Package webpubsub is the wire codec of Azure Web PubSub: the JSON
// subprotocols json.webpubsub.azure.v1 and json.reliable.webpubsub.azure.v1,
// the CloudEvents requests the service sends to an event handler, the
// ce-signature and abuse-protection checks, and the data-plane REST paths.
//
// It holds no connection and no metrics, so hubprobe's client and its
// reference hub share one definition of every frame.
package webpubsub

import (
	"errors"
	"fmt"
	"mime"
)

// The WebSocket subprotocols a PubSub client names in Sec-WebSocket-Protocol.
const (
	ProtocolJSON         = "json.webpubsub.azure.v1"
	ProtocolJSONReliable = "json.reliable.webpubsub.azure.v1"
)

// IsReliable reports whether subprotocol numbers messages with sequence ids
// and expects sequenceAck frames.
func IsReliable(subprotocol string) bool { return subprotocol == ProtocolJSONReliable }

// Error names the service puts in a failed ack. More may appear; callers
// treat an unknown name as a failure.
const (
	ErrorForbidden           = "Forbidden"
	ErrorInternalServerError = "InternalServerError"
	ErrorDuplicate           = "Duplicate"
	ErrorInvocationFailed    = "InvocationFailed"
)

// Kind says which frame a Frame is.
type Kind uint8

// Frame kinds. The first group goes from client to service, the second from
// service to client.
const (
	KindUnknown Kind = iota
	KindJoinGroup
	KindLeaveGroup
	KindSendToGroup
	KindEvent
	KindSequenceAck
	KindPing

	KindAck
	KindGroupMessage
	KindServerMessage
	KindConnected
	KindDisconnected
	KindPong
)

var kindNames = [...]string{
	KindUnknown:       "unknown",
	KindJoinGroup:     "joinGroup",
	KindLeaveGroup:    "leaveGroup",
	KindSendToGroup:   "sendToGroup",
	KindEvent:         "event",
	KindSequenceAck:   "sequenceAck",
	KindPing:          "ping",
	KindAck:           "ack",
	KindGroupMessage:  "message from group",
	KindServerMessage: "message from server",
	KindConnected:     "system connected",
	KindDisconnected:  "system disconnected",
	KindPong:          "pong",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// DataType says how a frame's data is carried. The zero value is JSON,
// which is also what the protocol assumes when a frame names no dataType.
type DataType uint8

// The data types a frame names in its dataType field.
const (
	DataTypeJSON   DataType = iota // data is any JSON value, carried as it is
	DataTypeText                   // data is a JSON string
	DataTypeBinary                 // data is a base64 JSON string
)

// Content types that select a data type in REST bodies and CloudEvents.
const (
	ContentTypeJSON   = "application/json"
	ContentTypeText   = "text/plain"
	ContentTypeBinary = "application/octet-stream"
)

func (t DataType) String() string {
	switch t {
	case DataTypeJSON:
		return "json"
	case DataTypeText:
		return "text"
	case DataTypeBinary:
		return "binary"
	}
	return fmt.Sprintf("DataType(%d)", uint8(t))
}

// ContentType is the media type that carries data of type t over HTTP.
func (t DataType) ContentType() string {
	switch t {
	case DataTypeText:
		return ContentTypeText
	case DataTypeBinary:
		return ContentTypeBinary
	}
	return ContentTypeJSON
}

// DataTypeForContentType maps a Content-Type header value (parameters such
// as charset allowed) to the data type the service derives from it.
func DataTypeForContentType(contentType string) (DataType, error) {
	t, err := dataTypeFor(contentType)
	if err != nil {
		return 0, errors.New("webpubsub: " + err.Error())
	}
	return t, nil
}

func dataTypeFor(contentType string) (DataType, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, fmt.Errorf("content type %s: %v", quoteLimited(contentType), err)
	}
	switch mediaType {
	case ContentTypeJSON:
		return DataTypeJSON, nil
	case ContentTypeText:
		return DataTypeText, nil
	case ContentTypeBinary:
		return DataTypeBinary, nil
	}
	return 0, fmt.Errorf("unsupported content type %s", quoteLimited(contentType))
}
