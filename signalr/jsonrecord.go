package signalr

import (
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
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
		name = jsonscan.AppendUnquoted(buf[:0], name)
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

// jsonSyntaxError is the error of a record encoding/json would refuse, msg
// being encoding/json's text (or the scanner's, which is the same).
func jsonSyntaxError(msg string) error {
	return fmt.Errorf("%w: invalid JSON record: %s", ErrProtocol, msg)
}

// foldEqualASCII reports whether key matches the ASCII name under the
// case folding encoding/json applies to member names: ASCII letters of
// either case, and any rune whose simple fold class holds the letter
// (such as U+017F for 's' or U+212A for 'k').
func foldEqualASCII(key []byte, name string) bool {
	i := 0
	for j := 0; j < len(name); j++ {
		if i >= len(key) {
			return false
		}
		want := upperASCII(name[j])
		if c := key[i]; c < utf8.RuneSelf {
			if upperASCII(c) != want {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(key[i:])
		if smallestFold(r) != rune(want) {
			return false
		}
		i += size
	}
	return i == len(key)
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// smallestFold returns the smallest rune of r's simple fold class.
func smallestFold(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// recordParser decodes one record into a Message. A member given twice
// ends as encoding/json would leave it: the later value wins, except that
// headers merge and a null list entry keeps what the earlier list had.
type recordParser struct {
	s                      jsonscan.Scanner
	m                      Message
	typ                    int64
	hasType, hasID, hasSeq bool
	// typeErr is the first value of the wrong kind. Like encoding/json, the
	// parser reports it only once the whole record proved to be valid JSON.
	typeErr error
	// spare is what the Message parsed before lends the record.
	spare *spare
}

// spare is what one record parsed into a Message lends the next: the array
// of its arguments, and its target, which the next record most often names
// again. Every read of the probe and of the hub is one record, and each
// allocated both.
type spare struct {
	args   []json.RawMessage
	target string
}

// keep takes what m can lend the records after it.
func (sp *spare) keep(m *Message) {
	if cap(m.Arguments) > cap(sp.args) {
		sp.args = m.Arguments[:0]
	}
	if m.Target != "" {
		sp.target = m.Target
	}
}

func (p *recordParser) parseRecord() error {
	s := &p.s
	if c := s.Peek(); c != '{' {
		return p.parseNonObject(c)
	}
	if err := s.Open(); err != nil {
		return err
	}
	for done := s.CloseIfEmpty('}'); !done; {
		name, plain, err := s.Key()
		if err != nil {
			return err
		}
		if err := p.parseField(lookupField(name, plain)); err != nil {
			return err
		}
		if done, err = s.Next('}'); err != nil {
			return err
		}
	}
	return p.s.End()
}

// parseNonObject validates a record that is not an object: null decodes to
// nothing (so the record lacks a type), anything else is of the wrong kind.
func (p *recordParser) parseNonObject(c byte) error {
	value, err := p.s.SkipValue()
	if err != nil {
		return err
	}
	if err := p.s.End(); err != nil {
		return err
	}
	if c != 'n' {
		p.typeErr = jsonSyntaxError("json: cannot unmarshal " + jsonKind(c, value, false) +
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
	c := p.s.Peek()
	value, err := p.s.SkipValue()
	if err == nil && p.typeErr == nil {
		p.typeErr = jsonSyntaxError("json: cannot unmarshal " + jsonKind(c, value, quoteNumber) +
			" into Go struct field jsonWireMessage." + field + " of type " + goType)
	}
	return err
}

func (p *recordParser) parseField(f jsonField) error {
	s := &p.s
	switch f {
	case fieldUnknown:
		_, err := s.SkipValue()
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
	if s.Peek() == 'n' {
		p.clearScalar(f)
		return s.ScanLiteral("null")
	}
	return p.parseScalar(f)
}

// parseRaw keeps the value's own text, null included. It still points
// into the record, until Message.Detach copies it out.
func (p *recordParser) parseRaw(dst *json.RawMessage) error {
	value, err := p.s.SkipValue()
	*dst = value
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
	c := p.s.Peek()
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
			return p.s.ScanLiteral("true")
		}
		return p.s.ScanLiteral("false")
	}
	if c != '"' {
		return p.mismatch(jsonFieldNames[f], "string", false)
	}
	known := ""
	if f == fieldTarget {
		known = p.spare.target
	}
	value, err := p.stringValue(known)
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
	if !jsonscan.BeginsNumber(p.s.Peek()) {
		return p.mismatch(jsonFieldNames[f], goType, true)
	}
	text, integer, err := p.s.ScanNumber()
	if err != nil {
		return err
	}
	var ok bool
	if f == fieldType {
		p.typ, ok = jsonscan.ParseInt(text)
		p.hasType = true
	} else {
		p.m.SequenceID, ok = jsonscan.ParseUint(text)
		p.hasSeq = true
	}
	if (!ok || !integer) && p.typeErr == nil {
		p.typeErr = jsonSyntaxError("json: cannot unmarshal number " + string(text) +
			" into Go struct field jsonWireMessage." + jsonFieldNames[f] + " of type " + goType)
	}
	return nil
}

// stringValue scans a string; when its text is known's, it returns known
// rather than a copy.
func (p *recordParser) stringValue(known string) (string, error) {
	content, plain, err := p.s.ScanString()
	if err != nil {
		return "", err
	}
	if plain && string(content) == known {
		return known, nil
	}
	return jsonscan.StringValue(content, plain), nil
}

// openList consumes null (isNull) or the '[' of a list; empty reports a
// list with no entries, skip a value of another kind.
func (p *recordParser) openList(f jsonField, goType string) (isNull, empty, skip bool, err error) {
	s := &p.s
	switch s.Peek() {
	case 'n':
		return true, false, false, s.ScanLiteral("null")
	case '[':
		if err := s.Open(); err != nil {
			return false, false, false, err
		}
		return false, s.CloseIfEmpty(']'), false, nil
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
	if args == nil {
		args = p.spare.args
	}
	for done := false; !done; {
		arg, err := p.s.SkipValue()
		if err != nil {
			return err
		}
		args = append(args, arg)
		if done, err = p.s.Next(']'); err != nil {
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
		switch p.s.Peek() {
		case 'n':
			err = p.s.ScanLiteral("null")
		case '"':
			ids[i], err = p.stringValue("")
		default:
			err = p.mismatch("streamIds", "string", false)
		}
		if err != nil {
			return err
		}
		if done, err = p.s.Next(']'); err != nil {
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
	switch s.Peek() {
	case 'n':
		p.m.Headers = nil
		return s.ScanLiteral("null")
	case '{':
	default:
		return p.mismatch("headers", "map[string]string", false)
	}
	if err := s.Open(); err != nil {
		return err
	}
	if p.m.Headers == nil {
		p.m.Headers = make(map[string]string)
	}
	for done := s.CloseIfEmpty('}'); !done; {
		name, plain, err := s.Key()
		if err != nil {
			return err
		}
		var value string
		switch s.Peek() {
		case 'n':
			err = s.ScanLiteral("null")
		case '"':
			value, err = p.stringValue("")
		default:
			err = p.mismatch("headers", "string", false)
		}
		if err != nil {
			return err
		}
		p.m.Headers[jsonscan.StringValue(name, plain)] = value
		if done, err = s.Next('}'); err != nil {
			return err
		}
	}
	return nil
}
