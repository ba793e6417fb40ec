package aspnet

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// Envelope is the persistent-connection response: what the server sends
// on every transport except the answers to /send. The zero Envelope is the
// keep-alive {}.
type Envelope struct {
	// Cursor (C) is the message id the client sends back on reconnect and
	// poll; empty when absent, as the clients ignore an empty one.
	Cursor string
	// Messages (M) are the messages, each as its JSON text: hub-to-client
	// invocations for a hub connection. The clients deliver them, and take
	// the cursor and the init flag, only when M is present: HasMessages.
	Messages    []json.RawMessage
	HasMessages bool
	// Initialized (S:1) answers a connect: the transport is up.
	Initialized bool
	// Disconnect (D:1) told a 1.x client that the server had ended the
	// connection. SignalR 2.1 stopped sending it (and the 2.4.3 clients
	// ignore it), but a server or a fault may still send it.
	Disconnect bool
	// Reconnect (T:1) asks the client to reconnect: the host is shutting
	// down.
	Reconnect bool
	// GroupsToken (G) is the signed list of the connection's groups, sent
	// when it changes; empty when absent.
	GroupsToken string
	// LongPollDelay (L) is how long a long-polling client waits before its
	// next poll, in milliseconds.
	LongPollDelay    int64
	HasLongPollDelay bool
	// Error (E) is a global error: the clients report it and stop.
	Error string
}

// IsKeepAlive reports whether e carries nothing: the keep-alive {}.
func (e *Envelope) IsKeepAlive() bool {
	return e.Cursor == "" && !e.HasMessages && !e.Initialized && !e.Disconnect &&
		!e.Reconnect && e.GroupsToken == "" && !e.HasLongPollDelay && e.Error == ""
}

// FrameKind tells the two kinds of frame a server sends apart.
type FrameKind int

const (
	// EnvelopeFrame is a persistent response (or a keep-alive).
	EnvelopeFrame FrameKind = iota
	// ResultFrame is a hub result, progress or error: a frame with I.
	ResultFrame
)

// Frame is one frame from the server: a WebSocket message, a Server-Sent
// Event's data, a Forever Frame script's argument, or a response body.
type Frame struct {
	Kind     FrameKind
	Envelope Envelope
	Result   HubResult
}

// DecodeFrame decodes one frame into f, reusing the capacity of f's
// slices. A frame with an I member is a hub result, as the clients read
// it; any other object is an envelope. Raw values in f alias data.
func DecodeFrame(data []byte, f *Frame) error {
	var m members
	if err := scanMembers(data, &m); err != nil {
		return err
	}
	if m.has('I') {
		f.Kind = ResultFrame
		f.Envelope = Envelope{Messages: f.Envelope.Messages[:0]}
		return f.Result.fromMembers(&m)
	}
	f.Kind = EnvelopeFrame
	f.Result = HubResult{}
	return f.Envelope.fromMembers(&m)
}

func (e *Envelope) fromMembers(m *members) (err error) {
	*e = Envelope{Messages: e.Messages[:0]}
	if e.Cursor, err = m.stringMember('C'); err != nil {
		return err
	}
	if e.GroupsToken, err = m.stringMember('G'); err != nil {
		return err
	}
	if e.Error, err = m.stringMember('E'); err != nil {
		return err
	}
	if err := e.flagsFromMembers(m); err != nil {
		return err
	}
	if err := e.delayFromMembers(m); err != nil {
		return err
	}
	if arr := m.rawMember('M'); arr != nil {
		e.HasMessages = true
		e.Messages, err = arrayElements(e.Messages, arr, 'M')
	}
	return err
}

func (e *Envelope) flagsFromMembers(m *members) (err error) {
	if e.Initialized, err = m.flagMember('S'); err != nil {
		return err
	}
	if e.Disconnect, err = m.flagMember('D'); err != nil {
		return err
	}
	e.Reconnect, err = m.flagMember('T')
	return err
}

func (e *Envelope) delayFromMembers(m *members) error {
	v := m.rawMember('L')
	if v == nil {
		return nil
	}
	ms, ok := jsonscan.ParseUint(v)
	if !ok || ms > 1<<53 {
		return fmt.Errorf("%w: \"L\" must be a whole number of milliseconds", ErrProtocol)
	}
	e.LongPollDelay, e.HasLongPollDelay = int64(ms), true
	return nil
}

// AppendEnvelope appends e as the server writes it: C, S, D, T, G, L, M,
// then E, each only when set (M when HasMessages). Messages are copied as
// they are: each must be one JSON value.
func AppendEnvelope(dst []byte, e *Envelope) []byte {
	start := len(dst)
	dst = append(dst, '{')
	if e.Cursor != "" {
		dst = appendStringMember(dst, start, 'C', e.Cursor)
	}
	dst = appendFlag(dst, start, 'S', e.Initialized)
	dst = appendFlag(dst, start, 'D', e.Disconnect)
	dst = appendFlag(dst, start, 'T', e.Reconnect)
	if e.GroupsToken != "" {
		dst = appendStringMember(dst, start, 'G', e.GroupsToken)
	}
	if e.HasLongPollDelay {
		dst = appendMemberName(dst, start, 'L')
		dst = strconv.AppendInt(dst, e.LongPollDelay, 10)
	}
	if e.HasMessages {
		dst = appendMemberName(dst, start, 'M')
		dst = appendRawArray(dst, e.Messages)
	}
	if e.Error != "" {
		dst = appendStringMember(dst, start, 'E', e.Error)
	}
	return append(dst, '}')
}

// appendMemberName appends "X": after a comma unless the member is the
// object's first (the object opened at dst[start]).
func appendMemberName(dst []byte, start int, letter byte) []byte {
	if len(dst) > start+1 {
		dst = append(dst, ',')
	}
	return append(dst, '"', letter, '"', ':')
}

func appendStringMember(dst []byte, start int, letter byte, s string) []byte {
	dst = appendMemberName(dst, start, letter)
	return jsonscan.AppendQuotedString(dst, s)
}

func appendRawMember(dst []byte, start int, letter byte, raw json.RawMessage) []byte {
	dst = appendMemberName(dst, start, letter)
	return append(dst, raw...)
}

func appendFlag(dst []byte, start int, letter byte, set bool) []byte {
	if !set {
		return dst
	}
	dst = appendMemberName(dst, start, letter)
	return append(dst, '1')
}

func appendRawArray(dst []byte, values []json.RawMessage) []byte {
	dst = append(dst, '[')
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRaw(dst, v)
	}
	return append(dst, ']')
}

func appendRaw(dst []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}
