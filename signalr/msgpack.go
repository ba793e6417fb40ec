package signalr

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// MaxMessagePackMessageSize bounds one message body, read or written. The
// wire format allows 2 GiB; a probe has no use for more than this, and a
// corrupt length prefix must not make the reader wait for gigabytes.
const MaxMessagePackMessageSize = 16 << 20

// maxVarIntLen is the longest length prefix: 0x7fffffff is FF FF FF FF 07.
const maxVarIntLen = 5

// MessagePackProtocol is the SignalR "messagepack" hub protocol, version 1:
// every message is a MessagePack array behind a VarInt length prefix.
//
// Argument, item and result values are converted from and to the JSON text
// that Message carries, so callers never see MessagePack. JSON integers
// become the smallest int/uint format and other numbers float64. On the way
// back, bin becomes a base64 string, a timestamp (ext -1) an RFC 3339 string,
// and integer map keys their decimal text; other extension types, other map
// keys, NaN and infinities are protocol errors.
type MessagePackProtocol struct{}

var _ HubProtocol = MessagePackProtocol{}

// Name returns the handshake name of the protocol.
func (MessagePackProtocol) Name() string { return "messagepack" }

// Version returns the protocol version sent in the handshake.
func (MessagePackProtocol) Version() int { return 1 }

// TransferFormat returns Binary: the transport must carry raw bytes.
func (MessagePackProtocol) TransferFormat() TransferFormat { return BinaryFormat }

// AppendMessage appends m with its length prefix to dst. On error dst is
// returned unchanged.
func (MessagePackProtocol) AppendMessage(dst []byte, m *Message) ([]byte, error) {
	start := len(dst)
	// The body is written after room for the longest prefix, then moved
	// back over the unused part once its size is known.
	dst = append(dst, 0, 0, 0, 0, 0)
	dst, err := appendMessagePackBody(dst, m)
	if err != nil {
		return dst[:start], err
	}
	size := len(dst) - start - maxVarIntLen
	if size > MaxMessagePackMessageSize {
		return dst[:start], fmt.Errorf("%w: message of %d bytes exceeds the %d-byte limit", ErrProtocol, size, MaxMessagePackMessageSize)
	}
	var prefix [maxVarIntLen]byte
	n := binary.PutUvarint(prefix[:], uint64(size))
	copy(dst[start+n:], dst[start+maxVarIntLen:])
	copy(dst[start:], prefix[:n])
	return dst[:start+n+size], nil
}

func appendMessagePackBody(dst []byte, m *Message) ([]byte, error) {
	switch m.Type {
	case InvocationType, StreamInvocationType:
		return appendMsgpackInvocation(dst, m)
	case StreamItemType:
		dst = append(dst, 0x94, byte(StreamItemType))
		dst = appendMsgpackHeaders(dst, m.Headers)
		dst = appendMsgpackString(dst, m.InvocationID)
		return appendMsgpackJSONValue(dst, m.Item, "item", -1)
	case CompletionType:
		return appendMsgpackCompletion(dst, m)
	case CancelInvocationType:
		dst = append(dst, 0x93, byte(CancelInvocationType))
		dst = appendMsgpackHeaders(dst, m.Headers)
		return appendMsgpackString(dst, m.InvocationID), nil
	case PingType:
		return append(dst, 0x91, byte(PingType)), nil
	case CloseType:
		return appendMsgpackClose(dst, m), nil
	case AckType, SequenceType:
		dst = append(dst, 0x92, byte(m.Type))
		return appendMsgpackUint(dst, m.SequenceID), nil
	}
	return dst, fmt.Errorf("%w: cannot encode message type %d", ErrProtocol, m.Type)
}

// appendMsgpackInvocation always writes the StreamIds element (0x90 when
// empty), as the spec's examples do; readers treat it as optional.
func appendMsgpackInvocation(dst []byte, m *Message) ([]byte, error) {
	dst = append(dst, 0x96, byte(m.Type))
	dst = appendMsgpackHeaders(dst, m.Headers)
	if m.InvocationID == "" && m.Type == InvocationType {
		dst = appendMsgpackNil(dst) // non-blocking
	} else {
		dst = appendMsgpackString(dst, m.InvocationID)
	}
	dst = appendMsgpackString(dst, m.Target)
	dst = appendMsgpackArrayHeader(dst, len(m.Arguments))
	for i, arg := range m.Arguments {
		var err error
		if dst, err = appendMsgpackJSONValue(dst, arg, "argument", i); err != nil {
			return dst, err
		}
	}
	dst = appendMsgpackArrayHeader(dst, len(m.StreamIDs))
	for _, id := range m.StreamIDs {
		dst = appendMsgpackString(dst, id)
	}
	return dst, nil
}

// Completion result kinds.
const (
	msgpackErrorResult   = 1
	msgpackVoidResult    = 2
	msgpackNonVoidResult = 3
)

func appendMsgpackCompletion(dst []byte, m *Message) ([]byte, error) {
	switch {
	case m.HasError:
		dst = append(dst, 0x95, byte(CompletionType))
		dst = appendMsgpackHeaders(dst, m.Headers)
		dst = appendMsgpackString(dst, m.InvocationID)
		return appendMsgpackString(append(dst, msgpackErrorResult), m.Error), nil
	case m.Result != nil:
		dst = append(dst, 0x95, byte(CompletionType))
		dst = appendMsgpackHeaders(dst, m.Headers)
		dst = appendMsgpackString(dst, m.InvocationID)
		return appendMsgpackJSONValue(append(dst, msgpackNonVoidResult), m.Result, "result", -1)
	}
	dst = append(dst, 0x94, byte(CompletionType))
	dst = appendMsgpackHeaders(dst, m.Headers)
	dst = appendMsgpackString(dst, m.InvocationID)
	return append(dst, msgpackVoidResult), nil
}

// appendMsgpackClose writes [7, Error|nil] and adds AllowReconnect only
// when it is true, which matches both of the spec's examples.
func appendMsgpackClose(dst []byte, m *Message) []byte {
	if m.AllowReconnect {
		dst = append(dst, 0x93, byte(CloseType))
	} else {
		dst = append(dst, 0x92, byte(CloseType))
	}
	if m.HasError {
		dst = appendMsgpackString(dst, m.Error)
	} else {
		dst = appendMsgpackNil(dst)
	}
	if m.AllowReconnect {
		dst = appendMsgpackBool(dst, true)
	}
	return dst
}

func appendMsgpackHeaders(dst []byte, headers map[string]string) []byte {
	dst = appendMsgpackMapHeader(dst, len(headers))
	for k, v := range headers {
		dst = appendMsgpackString(dst, k)
		dst = appendMsgpackString(dst, v)
	}
	return dst
}

// appendMsgpackJSONValue transcodes one JSON value; an empty one is written
// as nil, as the JSON protocol writes it as null. Errors name the value:
// what, followed by index when it is not negative.
func appendMsgpackJSONValue(dst []byte, v json.RawMessage, what string, index int) ([]byte, error) {
	if len(v) == 0 {
		return appendMsgpackNil(dst), nil
	}
	out, err := appendMsgpackFromJSON(dst, v)
	switch {
	case err != nil && index >= 0:
		return dst, fmt.Errorf("%s %d: %w", what, index, err)
	case err != nil:
		return dst, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// ParseMessages calls fn for every complete message in data and returns the
// tail that holds a partial one (its length prefix included).
func (MessagePackProtocol) ParseMessages(data []byte, fn func(*Message) error) ([]byte, error) {
	for len(data) > 0 {
		size, n, err := readMessagePackLength(data)
		if err != nil {
			return nil, err
		}
		if n == 0 || len(data)-n < size {
			return data, nil
		}
		m, err := parseMessagePackMessage(data[n : n+size])
		if err != nil {
			return nil, err
		}
		if err := fn(&m); err != nil {
			return nil, err
		}
		data = data[n+size:]
	}
	return data, nil
}

// readMessagePackLength decodes the VarInt length prefix. n is 0 when data
// ends inside the prefix.
func readMessagePackLength(data []byte) (size, n int, err error) {
	v, n := binary.Uvarint(data[:min(len(data), maxVarIntLen)])
	switch {
	case n == 0 && len(data) >= maxVarIntLen, n < 0:
		return 0, 0, fmt.Errorf("%w: length prefix longer than %d bytes", ErrProtocol, maxVarIntLen)
	case n == 0:
		return 0, 0, nil
	case v == 0:
		return 0, 0, fmt.Errorf("%w: empty message", ErrProtocol)
	case v > MaxMessagePackMessageSize:
		return 0, 0, fmt.Errorf("%w: message of %d bytes exceeds the %d-byte limit", ErrProtocol, v, MaxMessagePackMessageSize)
	}
	return int(v), n, nil
}

// msgpackMinFields is the number of array elements, type included, that a
// message of each type needs; more are ignored, for forward compatibility.
var msgpackMinFields = [...]int{
	InvocationType:       5,
	StreamItemType:       4,
	CompletionType:       4,
	StreamInvocationType: 5,
	CancelInvocationType: 3,
	PingType:             1,
	CloseType:            2,
	AckType:              2,
	SequenceType:         2,
}

// msgpackMessageDecoder reads one message body into a Message.
type msgpackMessageDecoder struct {
	r      msgpackReader
	m      Message
	fields int // elements in the message array
	hasID  bool
	hasSeq bool
}

// parseMessagePackMessage decodes one body (without its length prefix) and
// checks it as the JSON protocol checks its records.
func parseMessagePackMessage(body []byte) (Message, error) {
	d := msgpackMessageDecoder{r: msgpackReader{buf: body}}
	if err := d.decode(); err != nil {
		return Message{}, err
	}
	if d.r.off != len(body) {
		return Message{}, fmt.Errorf("%w: %d bytes after the message array", ErrProtocol, len(body)-d.r.off)
	}
	if err := validateMessage(&d.m, d.hasID, d.hasSeq); err != nil {
		return Message{}, err
	}
	return d.m, nil
}

func (d *msgpackMessageDecoder) decode() error {
	var err error
	if d.fields, err = d.r.readArrayLen(); err != nil {
		return err
	}
	if d.fields == 0 {
		return fmt.Errorf("%w: message is an empty array", ErrProtocol)
	}
	t, err := d.r.readInt("message type")
	if err != nil {
		return err
	}
	if t < 1 || t >= int64(len(msgpackMinFields)) {
		return fmt.Errorf("%w: unknown message type %d", ErrProtocol, t)
	}
	d.m.Type = MessageType(t)
	if want := msgpackMinFields[t]; d.fields < want {
		return fmt.Errorf("%w: message type %d has %d elements, want at least %d", ErrProtocol, t, d.fields, want)
	}
	used, err := d.decodeFields()
	if err != nil {
		return err
	}
	for i := used; i < d.fields && err == nil; i++ {
		err = d.r.skip(1)
	}
	return err
}

// decodeFields reads the elements after the type and returns how many
// elements, type included, the message used.
func (d *msgpackMessageDecoder) decodeFields() (int, error) {
	switch d.m.Type {
	case InvocationType, StreamInvocationType:
		return d.invocation()
	case StreamItemType:
		return 4, d.all(d.headers, d.invocationID, func() (err error) {
			d.m.Item, err = d.value("item")
			return err
		})
	case CompletionType:
		return d.completion()
	case CancelInvocationType:
		return 3, d.all(d.headers, d.invocationID)
	case PingType:
		return 1, nil
	case CloseType:
		return d.close()
	}
	// Ack and Sequence.
	var err error
	d.m.SequenceID, err = d.r.readUint("sequence id")
	d.hasSeq = err == nil
	return 2, err
}

// all runs steps in order and stops at the first error.
func (d *msgpackMessageDecoder) all(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (d *msgpackMessageDecoder) invocation() (int, error) {
	err := d.all(d.headers, d.invocationID, d.target, d.arguments)
	if err != nil || d.fields < 6 {
		return 5, err
	}
	return 6, d.streamIDs()
}

func (d *msgpackMessageDecoder) completion() (int, error) {
	if err := d.all(d.headers, d.invocationID); err != nil {
		return 0, err
	}
	kind, err := d.r.readInt("completion result kind")
	switch {
	case err != nil:
		return 0, err
	case kind == msgpackVoidResult:
		return 4, nil
	case kind != msgpackErrorResult && kind != msgpackNonVoidResult:
		return 0, fmt.Errorf("%w: unknown completion result kind %d", ErrProtocol, kind)
	case d.fields < 5:
		return 0, fmt.Errorf("%w: completion of result kind %d has no result element", ErrProtocol, kind)
	case kind == msgpackErrorResult:
		d.m.Error, err = d.r.readString("completion error")
		d.m.HasError = err == nil
		return 5, err
	}
	d.m.Result, err = d.value("result")
	return 5, err
}

func (d *msgpackMessageDecoder) close() (int, error) {
	msg, ok, err := d.r.readStringOrNil("close error")
	if err != nil {
		return 0, err
	}
	d.m.Error, d.m.HasError = string(msg), ok
	if d.fields < 3 {
		return 2, nil
	}
	d.m.AllowReconnect, err = d.r.readBool("allowReconnect")
	return 3, err
}

// headers reads the header map; nil is accepted as no headers, and an empty
// map leaves Headers nil, as the JSON protocol does when they are absent.
func (d *msgpackMessageDecoder) headers() error {
	if isNil, err := d.r.skipNil(); isNil || err != nil {
		return err
	}
	n, err := d.r.readMapLen()
	if err != nil || n == 0 {
		return err
	}
	d.m.Headers = make(map[string]string, n)
	for i := 0; i < n; i++ {
		k, err := d.r.readString("header name")
		if err != nil {
			return err
		}
		v, err := d.r.readString("header value")
		if err != nil {
			return err
		}
		d.m.Headers[k] = v
	}
	return nil
}

// invocationID reads a str or nil; validateMessage decides later whether
// the message type may lack an id.
func (d *msgpackMessageDecoder) invocationID() error {
	id, ok, err := d.r.readStringOrNil("invocation id")
	d.m.InvocationID, d.hasID = string(id), ok
	return err
}

func (d *msgpackMessageDecoder) target() (err error) {
	d.m.Target, err = d.r.readString("target")
	return err
}

// arguments transcodes every argument into one shared buffer, then hands
// out capacity-clipped slices of it: one allocation instead of one each.
func (d *msgpackMessageDecoder) arguments() error {
	n, err := d.r.readArrayLen()
	if err != nil {
		return err
	}
	args := make([]json.RawMessage, n)
	if n == 0 {
		d.m.Arguments = args
		return nil
	}
	buf := make([]byte, 0, jsonSizeHint(d.r.remaining()))
	var endsArray [8]int
	ends := endsArray[:0]
	for i := range args {
		if buf, err = d.r.appendJSONValue(buf, 1); err != nil {
			return fmt.Errorf("argument %d: %w", i, err)
		}
		ends = append(ends, len(buf))
	}
	start := 0
	for i, end := range ends {
		args[i] = buf[start:end:end]
		start = end
	}
	d.m.Arguments = args
	return nil
}

// value transcodes a single item or result.
func (d *msgpackMessageDecoder) value(what string) (json.RawMessage, error) {
	buf, err := d.r.appendJSONValue(make([]byte, 0, jsonSizeHint(d.r.remaining())), 1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return buf, nil
}

// jsonSizeHint guesses the JSON size of the MessagePack bytes left: a
// little larger, since numbers and quotes take more room as text.
func jsonSizeHint(msgpackBytes int) int { return msgpackBytes + msgpackBytes/4 + 8 }

// streamIDs reads the optional stream id array; nil or empty leaves
// StreamIDs nil, as the JSON protocol does when they are absent.
func (d *msgpackMessageDecoder) streamIDs() error {
	if isNil, err := d.r.skipNil(); isNil || err != nil {
		return err
	}
	n, err := d.r.readArrayLen()
	if err != nil || n == 0 {
		return err
	}
	d.m.StreamIDs = make([]string, n)
	for i := range d.m.StreamIDs {
		if d.m.StreamIDs[i], err = d.r.readString("stream id"); err != nil {
			return err
		}
	}
	return nil
}
