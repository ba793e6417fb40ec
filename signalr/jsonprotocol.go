package signalr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// JSONProtocol is the SignalR "json" hub protocol, version 1: one JSON object
// per record, each record ended by RecordSeparator.
type JSONProtocol struct{}

var _ HubProtocol = JSONProtocol{}

// Name returns the handshake name of the protocol.
func (JSONProtocol) Name() string { return "json" }

// Version returns the protocol version sent in the handshake.
func (JSONProtocol) Version() int { return 1 }

// TransferFormat returns Text: JSON records are UTF-8.
func (JSONProtocol) TransferFormat() TransferFormat { return TextFormat }

// AppendMessage writes m by hand rather than through encoding/json so that
// pre-encoded arguments are copied, not re-validated, on every send.
func (JSONProtocol) AppendMessage(dst []byte, m *Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"type":`...)
	dst = strconv.AppendInt(dst, int64(m.Type), 10)
	switch m.Type {
	case InvocationType, StreamInvocationType:
		dst = appendInvocation(dst, m)
	case StreamItemType:
		dst = appendStringField(dst, "invocationId", m.InvocationID)
		dst = appendRawField(dst, "item", m.Item)
		dst = appendHeaders(dst, m.Headers)
	case CompletionType:
		dst = appendCompletion(dst, m)
		dst = appendHeaders(dst, m.Headers)
	case CancelInvocationType:
		dst = appendStringField(dst, "invocationId", m.InvocationID)
		dst = appendHeaders(dst, m.Headers)
	case PingType:
	case CloseType:
		if m.HasError {
			dst = appendStringField(dst, "error", m.Error)
		}
		if m.AllowReconnect {
			dst = append(dst, `,"allowReconnect":true`...)
		}
	case AckType, SequenceType:
		dst = append(dst, `,"sequenceId":`...)
		dst = strconv.AppendUint(dst, m.SequenceID, 10)
	default:
		return dst[:start], fmt.Errorf("%w: cannot encode message type %d", ErrProtocol, m.Type)
	}
	return append(dst, '}', RecordSeparator), nil
}

func appendInvocation(dst []byte, m *Message) []byte {
	// A stream invocation needs its id even when it is empty.
	if m.InvocationID != "" || m.Type == StreamInvocationType {
		dst = appendStringField(dst, "invocationId", m.InvocationID)
	}
	dst = appendStringField(dst, "target", m.Target)
	dst = append(dst, `,"arguments":[`...)
	for i, a := range m.Arguments {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRaw(dst, a)
	}
	dst = append(dst, ']')
	if len(m.StreamIDs) > 0 {
		dst = append(dst, `,"streamIds":[`...)
		for i, id := range m.StreamIDs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonscan.AppendQuotedString(dst, id)
		}
		dst = append(dst, ']')
	}
	return appendHeaders(dst, m.Headers)
}

func appendCompletion(dst []byte, m *Message) []byte {
	dst = appendStringField(dst, "invocationId", m.InvocationID)
	switch {
	case m.HasError:
		dst = appendStringField(dst, "error", m.Error)
	case m.Result != nil:
		dst = appendRawField(dst, "result", m.Result)
	}
	return dst
}

func appendHeaders(dst []byte, headers map[string]string) []byte {
	if len(headers) == 0 {
		return dst
	}
	dst = append(dst, `,"headers":{`...)
	first := true
	for k, v := range headers {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = jsonscan.AppendQuotedString(dst, k)
		dst = append(dst, ':')
		dst = jsonscan.AppendQuotedString(dst, v)
	}
	return append(dst, '}')
}

func appendStringField(dst []byte, name, value string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return jsonscan.AppendQuotedString(dst, value)
}

func appendRawField(dst []byte, name string, raw json.RawMessage) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendRaw(dst, raw)
}

func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// ParseMessages splits data on record separators and decodes each record.
// The messages' raw values alias data, and fn gets the same Message each
// time, which lends each record the arguments' list and the target of the
// records before (see spare), so a read of one record allocates neither a
// Message, nor its arguments' list, nor a target it shares with an earlier
// one (see HubProtocol: nothing of a message is fn's to keep).
func (JSONProtocol) ParseMessages(data []byte, fn func(*Message) error) ([]byte, error) {
	s := getScratch()
	defer s.release()
	for {
		i := bytes.IndexByte(data, RecordSeparator)
		if i < 0 {
			return data, nil
		}
		if err := parseJSONRecordInto(data[:i], &s.msg, &s.spare); err != nil {
			return nil, err
		}
		if err := fn(&s.msg); err != nil {
			return nil, err
		}
		data = data[i+1:]
	}
}

// scratch is what JSONProtocol.ParseMessages parses into: its Message and what that
// Message lends the next record (see spare). Pooled, so that a record
// costs no Message of its own, and the probe's and the hub's reads, one
// record each, share what the records before them allocated.
type scratch struct {
	msg   Message
	spare spare
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratches.Get().(*scratch) }

// release returns s to the pool without the raw values that point into
// the caller's input, which the pool must not keep alive.
func (s *scratch) release() {
	clear(s.spare.args[:cap(s.spare.args)])
	s.msg = Message{}
	scratches.Put(s)
}

// parseJSONRecordInto decodes record into m, leaving the raw values
// pointing into record, with what sp lends, and keeps in sp what m can lend
// the next record.
func parseJSONRecordInto(record []byte, m *Message, sp *spare) error {
	p := recordParser{s: jsonscan.New(record, jsonscan.MaxDepth), spare: sp}
	*m = Message{}
	if err := p.parseRecord(); err != nil {
		return jsonSyntaxError(err.Error())
	}
	if p.typeErr != nil {
		return p.typeErr
	}
	if !p.hasType {
		return fmt.Errorf("%w: record has no \"type\"", ErrProtocol)
	}
	p.m.Type = MessageType(p.typ)
	*m = p.m
	sp.keep(m)
	return validateMessage(m, p.hasID, p.hasSeq)
}

func validateMessage(m *Message, hasID, hasSeq bool) error {
	switch m.Type {
	case InvocationType:
		if m.Target == "" {
			return fmt.Errorf("%w: invocation without a target", ErrProtocol)
		}
	case StreamInvocationType:
		if m.Target == "" || !hasID {
			return fmt.Errorf("%w: stream invocation needs a target and an invocationId", ErrProtocol)
		}
	case StreamItemType, CancelInvocationType:
		if !hasID {
			return fmt.Errorf("%w: message type %d without an invocationId", ErrProtocol, m.Type)
		}
	case CompletionType:
		if !hasID {
			return fmt.Errorf("%w: completion without an invocationId", ErrProtocol)
		}
		if m.HasError && m.Result != nil {
			return fmt.Errorf("%w: completion has both a result and an error", ErrProtocol)
		}
	case PingType, CloseType:
	case AckType, SequenceType:
		if !hasSeq {
			return fmt.Errorf("%w: message type %d without a sequenceId", ErrProtocol, m.Type)
		}
	default:
		return fmt.Errorf("%w: unknown message type %d", ErrProtocol, m.Type)
	}
	return nil
}
