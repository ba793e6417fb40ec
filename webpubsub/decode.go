package webpubsub

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// maxNesting bounds how deep the data of a frame may nest. Recursion depth,
// and with it stack use, stays bounded for hostile input; real payloads
// nest a handful of levels.
const maxNesting = 1000

// Decoder decodes frames, reusing its buffers from one frame to the next:
// in steady state Decode allocates nothing but new strings. A Decoder is not
// safe for concurrent use; give each connection its own.
type Decoder struct {
	s       jsonscan.Scanner
	key     []byte // a member name that held escapes
	str     []byte // a string member value that held escapes
	text    []byte // unescaped text data, or base64 text before decoding
	bin     []byte // decoded binary data
	group   string // last group, user and event names, reused while they repeat
	user    string
	event   string
	members memberState
	// wrong is the first member of the wrong type. It is reported only
	// once the whole frame has scanned as JSON, so that bad JSON is always
	// a SyntaxError, as with encoding/json.
	wrong error
}

// memberState is what the member walk found before the frame's type is
// known; members may come in any order.
type memberState struct {
	typ           wireType
	from          wireFrom
	other         string // the unknown type or source, for the error
	dataType      DataType
	dataTypeOther string
	hasDataType   bool
	seen          fieldSet
	data          []byte // the data value's text
	dataPlain     bool   // a string value without escapes or bytes outside ASCII
}

// Decode decodes one frame (the payload of one WebSocket message). It never
// panics; every error wraps ErrInvalidFrame.
func Decode(data []byte) (Frame, error) {
	var d Decoder
	var f Frame
	err := d.Decode(data, &f)
	return f, err
}

// Decode decodes one frame into f, replacing all of f. On error f is left
// in an unspecified state.
func (d *Decoder) Decode(data []byte, f *Frame) error {
	*f = Frame{}
	// The frame's own object is one level above its data.
	d.s = jsonscan.New(data, maxNesting+1)
	d.members, d.wrong = memberState{}, nil
	if err := d.frameObject(f); err != nil {
		if se, ok := err.(*jsonscan.SyntaxError); ok {
			return frameSyntaxError(se)
		}
		return err
	}
	if d.wrong != nil {
		return d.wrong
	}
	return d.finish(f)
}

func (d *Decoder) frameObject(f *Frame) error {
	s := &d.s
	if s.Peek() != '{' {
		// Report bad JSON as such before saying it is not an object.
		if _, err := s.SkipValue(); err != nil {
			return err
		}
		if err := s.End(); err != nil {
			return err
		}
		return invalid("frame is not a JSON object")
	}
	if err := d.eachMember(func(key []byte) error { return d.member(key, f) }); err != nil {
		return err
	}
	return s.End()
}

// frameSyntaxError phrases a scanner's error for a peer of the
// subprotocol: the scanner speaks of "JSON input" and its own depth limit.
func frameSyntaxError(se *jsonscan.SyntaxError) *SyntaxError {
	msg := se.Error()
	switch {
	case se.End:
		msg = "unexpected end of frame"
	case se.TooDeep:
		msg = "nesting deeper than " + strconv.Itoa(maxNesting)
	}
	return &SyntaxError{Offset: se.Offset, msg: msg}
}

// eachMember walks the object at the scanner's position, calling member
// with each name; member consumes the value.
func (d *Decoder) eachMember(member func(key []byte) error) error {
	s := &d.s
	if err := s.Open(); err != nil {
		return err
	}
	for done := s.CloseIfEmpty('}'); !done; {
		key, plain, err := s.Key()
		if err != nil {
			return err
		}
		if err := member(unescaped(&d.key, key, plain)); err != nil {
			return err
		}
		if done, err = s.Next('}'); err != nil {
			return err
		}
	}
	return nil
}

// unescaped returns the value of scanned string content: the content
// itself when it holds no escape, else its copy in *buf with the escapes
// resolved. Other bytes stand for themselves, even when they are not
// UTF-8. It is small enough to be inlined, as most content is plain.
func unescaped(buf *[]byte, content []byte, plain bool) []byte {
	if plain {
		return content
	}
	return unescapeInto(buf, content)
}

func unescapeInto(buf *[]byte, content []byte) []byte {
	if bytes.IndexByte(content, '\\') < 0 {
		return content
	}
	*buf = jsonscan.AppendUnescaped((*buf)[:0], content)
	return *buf
}

// wrongType consumes the value at the scanner's position and records that
// member name holds the wrong kind of value.
func (d *Decoder) wrongType(name, want string) error {
	v, err := d.s.SkipValue()
	if err != nil {
		return err
	}
	d.wrongValue(fmt.Sprintf("field %q: want %s, got %s", name, want, jsonKind(v[0])))
	return nil
}

func (d *Decoder) wrongValue(msg string) {
	if d.wrong == nil {
		d.wrong = invalid(msg)
	}
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// stringValue reads a string member; null counts as absent. The bytes are
// valid until the next stringValue call.
func (d *Decoder) stringValue(name string) (b []byte, present bool, err error) {
	s := &d.s
	switch s.Peek() {
	case '"':
		content, plain, err := s.ScanString()
		if err != nil {
			return nil, false, err
		}
		return unescaped(&d.str, content, plain), true, nil
	case 'n':
		return nil, false, s.ScanLiteral("null")
	}
	return nil, false, d.wrongType(name, "string")
}

// uintValue reads an unsigned integer member; null counts as absent. With
// quoted set, a string of decimal digits is accepted too.
func (d *Decoder) uintValue(name string, quoted bool) (n uint64, present bool, err error) {
	s := &d.s
	c := s.Peek()
	var text []byte
	switch {
	case c == 'n':
		return 0, false, s.ScanLiteral("null")
	case jsonscan.BeginsNumber(c):
		if text, _, err = s.ScanNumber(); err != nil {
			return 0, false, err
		}
		if n, ok := jsonscan.ParseUint(text); ok {
			return n, true, nil
		}
	case c == '"' && quoted:
		if text, _, err = d.stringValue(name); err != nil {
			return 0, false, err
		}
		if n, ok := jsonscan.ParseUint(text); ok {
			return n, true, nil
		}
	default:
		return 0, false, d.wrongType(name, "unsigned integer")
	}
	d.wrongValue(fmt.Sprintf("field %q: %s is not an unsigned 64-bit integer", name, quoteLimited(string(text))))
	return 0, false, nil
}

// boolValue reads a boolean member; null counts as absent.
func (d *Decoder) boolValue(name string) (v, present bool, err error) {
	s := &d.s
	switch s.Peek() {
	case 't':
		return true, true, s.ScanLiteral("true")
	case 'f':
		return false, true, s.ScanLiteral("false")
	case 'n':
		return false, false, s.ScanLiteral("null")
	}
	return false, false, d.wrongType(name, "boolean")
}

// intern returns b as a string, reusing *last when it holds the same text:
// group and user names repeat frame after frame.
func intern(last *string, b []byte) string {
	if string(b) != *last {
		*last = string(b)
	}
	return *last
}
