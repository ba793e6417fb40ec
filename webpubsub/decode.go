package webpubsub

import "fmt"

// Decoder decodes frames, reusing its buffers from one frame to the next:
// in steady state Decode allocates nothing but new strings. A Decoder is not
// safe for concurrent use; give each connection its own.
type Decoder struct {
	s       scanner
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
	dataStart     int
	dataEnd       int
	dataKind      byte
	dataEscaped   bool
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
	d.s = scanner{data: data}
	d.members, d.wrong = memberState{}, nil
	if err := d.frameObject(f); err != nil {
		return err
	}
	if d.wrong != nil {
		return d.wrong
	}
	return d.finish(f)
}

func (d *Decoder) frameObject(f *Frame) error {
	s := &d.s
	switch c := s.next(); {
	case c == '{':
	default:
		// Report bad JSON as such before saying it is not an object.
		if _, err := s.value(); err != nil {
			return err
		}
		if err := s.end(); err != nil {
			return err
		}
		return invalid("frame is not a JSON object")
	}
	if err := d.eachMember(func(key []byte) error { return d.member(key, f) }); err != nil {
		return err
	}
	return s.end()
}

// eachMember walks the object at the scanner's position, calling member
// with each name; member consumes the value.
func (d *Decoder) eachMember(member func(key []byte) error) error {
	s := &d.s
	s.pos++
	if s.next() == '}' {
		s.pos++
		return nil
	}
	for {
		if s.next() != '"' {
			return s.syntaxError("looking for beginning of object key string")
		}
		start, escaped, err := s.str()
		if err != nil {
			return err
		}
		key := s.data[start : s.pos-1]
		if escaped {
			d.key = unquote(d.key[:0], key)
			key = d.key
		}
		if err := s.consume(':', "after object key"); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch s.next() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.syntaxError("after object key:value pair")
		}
	}
}

// wrongType consumes the value at the scanner's position and records that
// member name holds the wrong kind of value.
func (d *Decoder) wrongType(name, want string) error {
	c, err := d.s.value()
	if err != nil {
		return err
	}
	d.wrongValue(fmt.Sprintf("field %q: want %s, got %s", name, want, jsonKind(c)))
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
	switch s.next() {
	case '"':
		start, escaped, err := s.str()
		if err != nil {
			return nil, false, err
		}
		b = s.data[start : s.pos-1]
		if escaped {
			d.str = unquote(d.str[:0], b)
			b = d.str
		}
		return b, true, nil
	case 'n':
		return nil, false, s.literal("null")
	}
	return nil, false, d.wrongType(name, "string")
}

// uintValue reads an unsigned integer member; null counts as absent. With
// quoted set, a string of decimal digits is accepted too.
func (d *Decoder) uintValue(name string, quoted bool) (n uint64, present bool, err error) {
	s := &d.s
	c := s.next()
	var text []byte
	switch {
	case c == 'n':
		return 0, false, s.literal("null")
	case c == '-' || isDigit(c):
		start := s.pos
		plain, err := s.number()
		if err != nil {
			return 0, false, err
		}
		text = s.data[start:s.pos]
		if n, ok := parseUint(text); plain && ok {
			return n, true, nil
		}
	case c == '"' && quoted:
		if text, _, err = d.stringValue(name); err != nil {
			return 0, false, err
		}
		if n, ok := parseDigits(text); ok {
			return n, true, nil
		}
	default:
		return 0, false, d.wrongType(name, "unsigned integer")
	}
	d.wrongValue(fmt.Sprintf("field %q: %s is not an unsigned 64-bit integer", name, quoteLimited(string(text))))
	return 0, false, nil
}

func parseDigits(b []byte) (uint64, bool) {
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
	}
	return parseUint(b)
}

// boolValue reads a boolean member; null counts as absent.
func (d *Decoder) boolValue(name string) (v, present bool, err error) {
	s := &d.s
	switch s.next() {
	case 't':
		return true, true, s.literal("true")
	case 'f':
		return false, true, s.literal("false")
	case 'n':
		return false, false, s.literal("null")
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
