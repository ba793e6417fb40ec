package hub

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

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
	str:         jsonString,
	integer:     jsonInteger,
	quote:       jsonQuote,
}

var msgpackCodec = &codec{
	HubProtocol:    signalr.MessagePackProtocol{},
	index:          1,
	lengthPrefixed: true,
	isObject:       jsonIsObject,
	field:          jsonObjectField,
	str:            jsonString,
	integer:        jsonInteger,
	quote:          jsonQuote,
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
	i := skipSpace(arg, 0)
	return i < len(arg) && arg[i] == '{'
}

func jsonString(arg []byte) (string, bool) {
	arg = bytes.TrimSpace(arg)
	if len(arg) < 2 || arg[0] != '"' {
		return "", false
	}
	if inner := arg[1 : len(arg)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(arg, &s) != nil {
		return "", false
	}
	return s, true
}

func jsonQuote(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

func jsonInteger(arg []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(arg)), 10, 64)
	return n, err == nil
}

// jsonObjectField scans the top level of a JSON object for key without
// decoding the rest of it. Input is untrusted: every index is bounds-checked
// and malformed input yields false.
func jsonObjectField(obj []byte, key string) (string, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return "", false
	}
	i++
	for {
		i = skipSpace(obj, i)
		start := i
		if i = skipString(obj, i); i < 0 {
			return "", false
		}
		name := obj[start:i]
		if i = skipSpace(obj, i); i >= len(obj) || obj[i] != ':' {
			return "", false
		}
		i = skipSpace(obj, i+1)
		vstart := i
		if i = skipValue(obj, i); i < 0 {
			return "", false
		}
		if stringEquals(name, key) {
			return scalarText(obj[vstart:i])
		}
		if i = skipSpace(obj, i); i >= len(obj) || obj[i] != ',' {
			return "", false
		}
		i++
	}
}

// stringEquals compares a quoted JSON string with s.
func stringEquals(quoted []byte, s string) bool {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return len(quoted) == len(s)+2 && string(quoted[1:len(quoted)-1]) == s
	}
	decoded, ok := jsonString(quoted)
	return ok && decoded == s
}

func scalarText(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		return jsonString(v)
	case c == '-' || ('0' <= c && c <= '9'):
		return string(v), true
	}
	return "", false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i], or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	start := i
	for i < len(b) && !isDelimiter(b[i]) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

func skipNested(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 {
				return -1
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
