// Package signalr is the wire codec of the ASP.NET Core SignalR hub
// protocol: its messages, the JSON and MessagePack hub protocols with their
// framing, the handshake, and the shapes of the negotiate exchange.
//
// It holds no connection and no metrics, so hubprobe's client (package
// probe) and its reference hub share one definition of every message.
package signalr

import (
	"encoding/json"
	"errors"
	"slices"
)

// MessageType is the "type" discriminator of the SignalR hub protocol.
type MessageType int

// Hub protocol message types, as numbered by the SignalR HubProtocol spec.
const (
	InvocationType       MessageType = 1
	StreamItemType       MessageType = 2
	CompletionType       MessageType = 3
	StreamInvocationType MessageType = 4
	CancelInvocationType MessageType = 5
	PingType             MessageType = 6
	CloseType            MessageType = 7
	AckType              MessageType = 8
	SequenceType         MessageType = 9
)

// RecordSeparator ends every JSON record, including the handshake.
const RecordSeparator = 0x1e

// Message is one hub protocol message. Arguments, Item and Result hold the
// protocol's own encoding of each value (JSON text for the JSON protocol), so
// payloads pass through without being decoded on the hot path.
type Message struct {
	Type         MessageType
	InvocationID string
	Target       string
	Arguments    []json.RawMessage
	StreamIDs    []string
	Headers      map[string]string
	Item         json.RawMessage
	// Result is nil when the Completion carries no result (void), and the
	// literal null when the server sent "result": null.
	Result json.RawMessage
	// Error is set for a Completion or Close that carries an error.
	Error          string
	HasError       bool
	AllowReconnect bool
	SequenceID     uint64
}

// TransferFormat is what a transport must carry for a hub protocol.
type TransferFormat string

// Transfer formats named in negotiate responses.
const (
	TextFormat   TransferFormat = "Text"
	BinaryFormat TransferFormat = "Binary"
)

// HubProtocol encodes and decodes hub messages. One instance may be shared by
// many connections; implementations keep no per-connection state.
type HubProtocol interface {
	Name() string
	Version() int
	TransferFormat() TransferFormat
	// AppendMessage appends the framed encoding of m to dst.
	AppendMessage(dst []byte, m *Message) ([]byte, error)
	// ParseMessages calls fn for every complete framed message in data and
	// returns the unconsumed tail (a partial record). The message, its
	// arguments' list and its raw values are valid only until fn returns:
	// they may alias data, and the next record, of this call or a later
	// one, may reuse the Message and the list. A caller keeps what it needs
	// by copying the Message and calling Detach on the copy. Reading
	// messages where they lie, into a Message used again, saves copies and
	// allocations per message, most of what a probe's deliveries and a
	// hub's invocations allocated.
	ParseMessages(data []byte, fn func(*Message) error) (rest []byte, err error)
}

// ErrProtocol wraps every malformed-input error, so callers can tell bad bytes
// from the server apart from I/O failures with errors.Is.
var ErrProtocol = errors.New("protocol error")

// Detach copies the raw values (Arguments, Item, Result), which may point
// into the input they were parsed from, into one buffer of the message's
// own, so the message outlives that input.
func (m *Message) Detach() {
	if len(m.Arguments) > 0 {
		// The list itself may be the parser's, used again for the next
		// record (see HubProtocol.ParseMessages).
		m.Arguments = slices.Clone(m.Arguments)
	}
	n := len(m.Item) + len(m.Result)
	for _, a := range m.Arguments {
		n += len(a)
	}
	if n == 0 {
		return
	}
	buf := make([]byte, 0, n)
	for i := range m.Arguments {
		buf, m.Arguments[i] = moveRaw(buf, m.Arguments[i])
	}
	buf, m.Item = moveRaw(buf, m.Item)
	_, m.Result = moveRaw(buf, m.Result)
}

// moveRaw appends r to buf and returns the copy, capped so that appending
// to one value cannot overwrite the next.
func moveRaw(buf []byte, r json.RawMessage) ([]byte, json.RawMessage) {
	if r == nil {
		return buf, nil
	}
	start := len(buf)
	buf = append(buf, r...)
	return buf, buf[start:len(buf):len(buf)]
}
