package webpubsub

// Frame is one subprotocol frame in either direction. Kind says which
// fields are meaningful; Decode leaves every other field zero, and
// AppendFrame ignores them.
//
//	KindJoinGroup, KindLeaveGroup  Group, AckID/HasAckID
//	KindSendToGroup                Group, AckID/HasAckID, NoEcho, DataType, Data
//	KindEvent                      Event, AckID/HasAckID, DataType, Data
//	KindSequenceAck                SequenceID
//	KindAck                        AckID, Success, Error
//	KindGroupMessage               Group, FromUserID, DataType, Data, SequenceID
//	KindServerMessage              DataType, Data, SequenceID
//	KindConnected                  UserID, ConnectionID, ReconnectionToken
//	KindDisconnected               Message
//	KindPing, KindPong             nothing
type Frame struct {
	Kind Kind

	// AckID is the request's ackId, or the ackId an ack answers. HasAckID
	// says whether a request carries one (without it the request is
	// fire-and-forget); an ack always does.
	AckID    uint64
	HasAckID bool

	Group string
	// Event is the name of a custom event (the event handler receives it as
	// azure.webpubsub.user.<Event>).
	Event  string
	NoEcho bool

	// Data is the payload as the application sees it: for DataTypeJSON the
	// JSON text of the value, for DataTypeText the string's UTF-8 bytes, for
	// DataTypeBinary the decoded bytes. After Decoder.Decode it may alias the
	// decoded input or the Decoder's buffer: valid until the next Decode call
	// on that Decoder and while the input is unchanged.
	DataType DataType
	Data     []byte

	// SequenceID numbers a message on the reliable subprotocol (0 when the
	// protocol does not number messages); in a sequenceAck it is the largest
	// id received.
	SequenceID uint64
	FromUserID string

	Success bool
	Error   AckError

	UserID            string
	ConnectionID      string
	ReconnectionToken string
	// Message is the reason a disconnected frame gives.
	Message string
}

// AckError is the error of a failed ack.
type AckError struct {
	Name    string // ErrorForbidden, ErrorDuplicate, ...
	Message string
}

// AckOK reports whether an ack means the request took effect: a success,
// or a Duplicate (the same ackId was processed before), as the official
// client treats it.
func (f *Frame) AckOK() bool {
	return f.Success || f.Error.Name == ErrorDuplicate
}

// carriesData reports whether frames of kind k have dataType and data.
func carriesData(k Kind) bool {
	switch k {
	case KindSendToGroup, KindEvent, KindGroupMessage, KindServerMessage:
		return true
	}
	return false
}
