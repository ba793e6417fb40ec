package signalrhub

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/signalr"
)

// codec is the hub's seam to one hub protocol: the probe package's codec for
// framing, plus the few argument readers the hub methods need. Argument
// values are JSON text in both protocols (the MessagePack codec converts at
// the edge), so payloads pass through unchanged and only these helpers look
// inside them.
type codec struct {
	signalr.HubProtocol
	// index numbers the codec so a fan-out can encode once per protocol.
	index int
	// lengthPrefixed selects MessagePack's VarInt framing over JSON's
	// record separator.
	lengthPrefixed bool
	// isObject reports whether an argument is a map (the benchmark payload).
	isObject func(arg []byte) bool
	// field returns a top-level member of a map argument as text (strings
	// unquoted, numbers as written), like .NET's ToString on that member.
	field func(arg []byte, key string) (string, bool)
	// str decodes a string argument.
	str func(arg []byte) (string, bool)
	// integer decodes an integral number argument.
	integer func(arg []byte) (int64, bool)
	// quote appends s encoded as a string value.
	quote func(dst []byte, s string) []byte
}

var jsonCodec = &codec{
	HubProtocol: signalr.JSONProtocol{},
	index:       0,
	isObject:    jsonIsObject,
	field:       jsonObjectField,
	str:         signalr.UnquoteJSON,
	integer:     jsonInteger,
	quote:       jsonQuote,
}

var msgpackCodec = &codec{
	HubProtocol:    signalr.MessagePackProtocol{},
	index:          1,
	lengthPrefixed: true,
	isObject:       jsonIsObject,
	field:          jsonObjectField,
	str:            signalr.UnquoteJSON,
	integer:        jsonInteger,
	quote:          jsonQuote,
}

// appendMessage encodes m. The JSON protocol is called directly so that m,
// and the arguments it points to, can stay on the caller's stack: through
// the interface they would move to the heap on every reply.
func (cd *codec) appendMessage(dst []byte, m *signalr.Message) ([]byte, error) {
	if !cd.lengthPrefixed {
		return signalr.JSONProtocol{}.AppendMessage(dst, m)
	}
	escaping := *m
	escaping.Arguments = append([]json.RawMessage(nil), m.Arguments...)
	return cd.AppendMessage(dst, &escaping)
}

// codecs are the hub protocols a client may ask for in its handshake.
var codecs = map[string]*codec{"json": jsonCodec, "messagepack": msgpackCodec}

const numCodecs = 2

// maxVarIntLen is the longest MessagePack length prefix (0x7fffffff).
const maxVarIntLen = 5

// nextRecord finds the first whole message in data. n is its length with
// framing, 0 while it is incomplete; size is the message's size for the
// limit check, as far as it is known.
func (cd *codec) nextRecord(data []byte) (n, size int, err error) {
	if !cd.lengthPrefixed {
		end := bytes.IndexByte(data, signalr.RecordSeparator)
		if end < 0 {
			return 0, len(data), nil
		}
		return end + 1, end, nil
	}
	v, k := binary.Uvarint(data[:min(len(data), maxVarIntLen)])
	switch {
	case k == 0 && len(data) < maxVarIntLen:
		return 0, 0, nil
	case k <= 0 || v > 0x7fffffff:
		return 0, 0, fmt.Errorf("%w: invalid length prefix", signalr.ErrProtocol)
	case v == 0:
		return 0, 0, fmt.Errorf("%w: empty message", signalr.ErrProtocol)
	case uint64(len(data)-k) < v:
		return 0, int(v), nil
	}
	return k + int(v), int(v), nil
}

func jsonIsObject(arg []byte) bool {
	arg = bytes.TrimLeft(arg, " \t\n\r")
	return len(arg) > 0 && arg[0] == '{'
}

func jsonQuote(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

func jsonInteger(arg []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(arg)), 10, 64)
	return n, err == nil
}

// jsonObjectField returns a top-level member of a JSON object as text:
// a string's value, or a number as written. Anything else, including an
// object that is not valid JSON, yields false.
func jsonObjectField(obj []byte, key string) (string, bool) {
	v, ok := signalr.JSONMember(obj, key)
	if !ok {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		return signalr.UnquoteJSON(v)
	case c == '-' || ('0' <= c && c <= '9'):
		return string(v), true
	}
	return "", false
}
