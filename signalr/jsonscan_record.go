package signalr

import (
	"encoding/json"
)

// jsonField names a member of a hub protocol record.
type jsonField int

const (
	fieldUnknown jsonField = iota
	fieldType
	fieldInvocationID
	fieldTarget
	fieldArguments
	fieldStreamIDs
	fieldHeaders
	fieldItem
	fieldResult
	fieldError
	fieldAllowReconnect
	fieldSequenceID
	numJSONFields
)

var jsonFieldNames = [numJSONFields]string{
	fieldType:           "type",
	fieldInvocationID:   "invocationId",
	fieldTarget:         "target",
	fieldArguments:      "arguments",
	fieldStreamIDs:      "streamIds",
	fieldHeaders:        "headers",
	fieldItem:           "item",
	fieldResult:         "result",
	fieldError:          "error",
	fieldAllowReconnect: "allowReconnect",
	fieldSequenceID:     "sequenceId",
}

// lookupField matches a member name as encoding/json matches struct
// fields: exactly first, then without regard to case.
func lookupField(name []byte, plain bool) jsonField {
	if !plain {
		var buf [32]byte
		name = appendUnquoted(buf[:0], name)
	}
	for f := fieldType; f < numJSONFields; f++ {
		if string(name) == jsonFieldNames[f] {
			return f
		}
	}
	for f := fieldType; f < numJSONFields; f++ {
		if foldEqualASCII(name, jsonFieldNames[f]) {
			return f
		}
	}
	return fieldUnknown
}

// recordParser decodes one record into a Message. A member given twice
// ends as encoding/json would leave it: the later value wins, except that
// headers merge and a null list entry keeps what the earlier list had.
type recordParser struct {
	s                      jsonScanner
	m                      Message
	typ                    int64
	hasType, hasID, hasSeq bool
	// typeErr is the first value of the wrong kind. Like encoding/json, the
	// parser reports it only once the whole record proved to be valid JSON.
	typeErr error
}

func (p *recordParser) parseRecord() error {
	s := &p.s
	if c := s.peek(); c != '{' {
		return p.parseNonObject(c)
	}
	if err := s.open(); err != nil {
		return err
	}
	for done := s.closeIfEmpty('}'); !done; {
		name, plain, err := s.key()
		if err != nil {
			return err
		}
		if err := p.parseField(lookupField(name, plain)); err != nil {
			return err
		}
		if done, err = s.next('}'); err != nil {
			return err
		}
	}
	return p.s.atEnd()
}

// parseNonObject validates a record that is not an object: null decodes to
// nothing (so the record lacks a type), anything else is of the wrong kind.
func (p *recordParser) parseNonObject(c byte) error {
	start, end, err := p.s.skipValue()
	if err != nil {
		return err
	}
	if err := p.s.atEnd(); err != nil {
		return err
	}
	if c != 'n' {
		p.typeErr = jsonSyntaxError("json: cannot unmarshal " + jsonKind(c, p.s.data[start:end], false) +
			" into Go value of type signalr.jsonWireMessage")
	}
	return nil
}

// jsonKind names a value's kind as encoding/json's type errors do; an
// integer field also quotes a number's text.
func jsonKind(c byte, text []byte, quoteNumber bool) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	if quoteNumber {
		return "number " + string(text)
	}
	return "number"
}

// mismatch skips a value of the wrong kind for field and keeps the first
// such error.
func (p *recordParser) mismatch(field, goType string, quoteNumber bool) error {
	c := p.s.peek()
	start, end, err := p.s.skipValue()
	if err == nil && p.typeErr == nil {
		p.typeErr = jsonSyntaxError("json: cannot unmarshal " + jsonKind(c, p.s.data[start:end], quoteNumber) +
			" into Go struct field jsonWireMessage." + field + " of type " + goType)
	}
	return err
}

func (p *recordParser) parseField(f jsonField) error {
	s := &p.s
	switch f {
	case fieldUnknown:
		_, _, err := s.skipValue()
		return err
	case fieldItem:
		return p.parseRaw(&p.m.Item)
	case fieldResult:
		return p.parseRaw(&p.m.Result)
	case fieldArguments:
		return p.parseArguments()
	case fieldStreamIDs:
		return p.parseStreamIDs()
	case fieldHeaders:
		return p.parseHeaders()
	}
	if s.peek() == 'n' {
		p.clearScalar(f)
		return s.scanLiteral("null")
	}
	return p.parseScalar(f)
}

// parseRaw keeps the value's own text, null included. It still points
// into the record; detachRaw copies it out before the message is returned.
func (p *recordParser) parseRaw(dst *json.RawMessage) error {
	start, end, err := p.s.skipValue()
	*dst = p.s.data[start:end:end]
	return err
}

// clearScalar applies a null: pointer fields become absent, the others
// keep their value.
func (p *recordParser) clearScalar(f jsonField) {
	switch f {
	case fieldType:
		p.typ, p.hasType = 0, false
	case fieldInvocationID:
		p.m.InvocationID, p.hasID = "", false
	case fieldError:
		p.m.Error, p.m.HasError = "", false
	case fieldSequenceID:
		p.m.SequenceID, p.hasSeq = 0, false
	}
}

func (p *recordParser) parseScalar(f jsonField) (err error) {
	c := p.s.peek()
	switch f {
	case fieldType:
		return p.parseInteger(fieldType)
	case fieldSequenceID:
		return p.parseInteger(fieldSequenceID)
	case fieldAllowReconnect:
		if c != 't' && c != 'f' {
			return p.mismatch(jsonFieldNames[f], "bool", false)
		}
		if p.m.AllowReconnect = c == 't'; p.m.AllowReconnect {
			return p.s.scanLiteral("true")
		}
		return p.s.scanLiteral("false")
	}
	if c != '"' {
		return p.mismatch(jsonFieldNames[f], "string", false)
	}
	value, err := p.stringValue()
	switch f {
	case fieldInvocationID:
		p.m.InvocationID, p.hasID = value, true
	case fieldTarget:
		p.m.Target = value
	case fieldError:
		p.m.Error, p.m.HasError = value, true
	}
	return err
}

// parseInteger reads "type" (an int) or "sequenceId" (a uint64).
func (p *recordParser) parseInteger(f jsonField) error {
	goType := "int"
	if f == fieldSequenceID {
		goType = "uint64"
	}
	if c := p.s.peek(); c != '-' && !isDigit(c) {
		return p.mismatch(jsonFieldNames[f], goType, true)
	}
	start := p.s.pos
	integer, err := p.s.scanNumber()
	if err != nil {
		return err
	}
	text := p.s.data[start:p.s.pos]
	var ok bool
	if f == fieldType {
		p.typ, ok = int64Value(text)
		p.hasType = true
	} else {
		p.m.SequenceID, ok = uint64Value(text)
		p.hasSeq = true
	}
	if (!ok || !integer) && p.typeErr == nil {
		p.typeErr = jsonSyntaxError("json: cannot unmarshal number " + string(text) +
			" into Go struct field jsonWireMessage." + jsonFieldNames[f] + " of type " + goType)
	}
	return nil
}

func (p *recordParser) stringValue() (string, error) {
	content, plain, err := p.s.scanString()
	if err != nil {
		return "", err
	}
	return jsonStringValue(content, plain), nil
}

// openList consumes null (isNull) or the '[' of a list; empty reports a
// list with no entries, skip a value of another kind.
func (p *recordParser) openList(f jsonField, goType string) (isNull, empty, skip bool, err error) {
	s := &p.s
	switch s.peek() {
	case 'n':
		return true, false, false, s.scanLiteral("null")
	case '[':
		if err := s.open(); err != nil {
			return false, false, false, err
		}
		return false, s.closeIfEmpty(']'), false, nil
	}
	return false, false, true, p.mismatch(jsonFieldNames[f], goType, false)
}

func (p *recordParser) parseArguments() error {
	isNull, empty, skip, err := p.openList(fieldArguments, "[]json.RawMessage")
	switch {
	case err != nil || skip:
		return err
	case isNull:
		p.m.Arguments = nil
		return nil
	case empty:
		p.m.Arguments = []json.RawMessage{}
		return nil
	}
	args := p.m.Arguments[:0]
	for done := false; !done; {
		start, end, err := p.s.skipValue()
		if err != nil {
			return err
		}
		args = append(args, p.s.data[start:end:end])
		if done, err = p.s.next(']'); err != nil {
			return err
		}
	}
	p.m.Arguments = args
	return nil
}

// parseStreamIDs fills the existing slice in place, as encoding/json does,
// so a null entry keeps the id an earlier "streamIds" left at that index.
func (p *recordParser) parseStreamIDs() error {
	isNull, empty, skip, err := p.openList(fieldStreamIDs, "[]string")
	switch {
	case err != nil || skip:
		return err
	case isNull:
		p.m.StreamIDs = nil
		return nil
	case empty:
		p.m.StreamIDs = []string{}
		return nil
	}
	ids, i := p.m.StreamIDs, 0
	for done := false; !done; i++ {
		if i == cap(ids) {
			ids = append(ids, "")
		}
		ids = ids[:max(len(ids), i+1)]
		switch p.s.peek() {
		case 'n':
			err = p.s.scanLiteral("null")
		case '"':
			ids[i], err = p.stringValue()
		default:
			err = p.mismatch("streamIds", "string", false)
		}
		if err != nil {
			return err
		}
		if done, err = p.s.next(']'); err != nil {
			return err
		}
	}
	p.m.StreamIDs = ids[:i]
	return nil
}

// parseHeaders adds to the existing map, as encoding/json does; a null
// value stores the empty string.
func (p *recordParser) parseHeaders() error {
	s := &p.s
	switch s.peek() {
	case 'n':
		p.m.Headers = nil
		return s.scanLiteral("null")
	case '{':
	default:
		return p.mismatch("headers", "map[string]string", false)
	}
	if err := s.open(); err != nil {
		return err
	}
	if p.m.Headers == nil {
		p.m.Headers = make(map[string]string)
	}
	for done := s.closeIfEmpty('}'); !done; {
		name, plain, err := s.key()
		if err != nil {
			return err
		}
		var value string
		switch s.peek() {
		case 'n':
			err = s.scanLiteral("null")
		case '"':
			value, err = p.stringValue()
		default:
			err = p.mismatch("headers", "string", false)
		}
		if err != nil {
			return err
		}
		p.m.Headers[jsonStringValue(name, plain)] = value
		if done, err = s.next('}'); err != nil {
			return err
		}
	}
	return nil
}

// detachRaw copies the raw values, which still point into the record, into
// one buffer of their own: callers reuse their read buffer at once.
func detachRaw(m *Message) {
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
