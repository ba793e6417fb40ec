package aspnet

import (
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// members holds the text of each member of a JSON object whose name is one
// capital letter: every name the classic protocol uses in its frames.
// Other members are validated and skipped, as the clients ignore them; a
// name given twice keeps its later value, as JSON.parse does.
type members struct {
	value [26][]byte
}

// has reports whether the object had a member called letter.
func (m *members) has(letter byte) bool { return m.value[letter-'A'] != nil }

func (m *members) get(letter byte) []byte { return m.value[letter-'A'] }

// scanMembers reads data, which must be one JSON object (white space
// around it allowed), into m.
func scanMembers(data []byte, m *members) error {
	*m = members{}
	return walkObject(data, func(key []byte, plain bool, value []byte) {
		if letter, ok := singleLetter(key, plain); ok {
			m.value[letter-'A'] = value
		}
	})
}

// walkObject validates data as one JSON object and calls fn with each
// member's name (as ScanString returns it) and value text.
func walkObject(data []byte, fn func(key []byte, plain bool, value []byte)) error {
	s := jsonscan.New(data, jsonscan.MaxDepth)
	if s.Peek() != '{' {
		return fmt.Errorf("%w: expected a JSON object", ErrProtocol)
	}
	if err := s.Open(); err != nil {
		return syntaxError(err)
	}
	for done := s.CloseIfEmpty('}'); !done; {
		key, plain, err := s.Key()
		if err != nil {
			return syntaxError(err)
		}
		value, err := s.SkipValue()
		if err != nil {
			return syntaxError(err)
		}
		fn(key, plain, value)
		if done, err = s.Next('}'); err != nil {
			return syntaxError(err)
		}
	}
	if err := s.End(); err != nil {
		return syntaxError(err)
	}
	return nil
}

// singleLetter returns the name's letter when the name, unescaped, is one
// capital ASCII letter.
func singleLetter(key []byte, plain bool) (byte, bool) {
	if !plain {
		var buf [8]byte
		if len(key) > 12 { // \uXXXX\uXXXX is the longest spelling of one rune
			return 0, false
		}
		key = jsonscan.AppendUnquoted(buf[:0], key)
	}
	if len(key) == 1 && 'A' <= key[0] && key[0] <= 'Z' {
		return key[0], true
	}
	return 0, false
}

func syntaxError(err error) error {
	return fmt.Errorf("%w: invalid JSON: %v", ErrProtocol, err)
}

// stringMember returns the value of member letter, which must be a JSON
// string when present.
func (m *members) stringMember(letter byte) (string, error) {
	v := m.get(letter)
	if v == nil {
		return "", nil
	}
	if v[0] != '"' {
		return "", fmt.Errorf("%w: %q must be a string", ErrProtocol, letter)
	}
	return stringValue(v), nil
}

// internedMember is stringMember returning last, without a copy, when
// the member's text is last's: plain text reads as itself.
func (m *members) internedMember(letter byte, last string) (string, error) {
	if v := m.get(letter); len(v) >= 2 && v[0] == '"' {
		if content := v[1 : len(v)-1]; string(content) == last && !needsUnquote(content) {
			return last, nil
		}
	}
	return m.stringMember(letter)
}

// stringValue returns the value of the scanned JSON string v.
func stringValue(v []byte) string {
	content := v[1 : len(v)-1]
	return jsonscan.StringValue(content, !needsUnquote(content))
}

// needsUnquote reports whether scanned string content holds an escape or
// a byte outside printable ASCII.
func needsUnquote(content []byte) bool {
	for _, c := range content {
		if !jsonscan.IsPlain(c) {
			return true
		}
	}
	return false
}

// flagMember reads a flag the server writes as the number 1 (S, T, D of
// the envelope); both official clients test for 1.
func (m *members) flagMember(letter byte) (bool, error) {
	v := m.get(letter)
	if v == nil || string(v) == "null" {
		return false, nil
	}
	if string(v) != "1" {
		return false, fmt.Errorf("%w: %q must be 1", ErrProtocol, letter)
	}
	return true, nil
}

// rawMember returns the text of a member of any kind, nil when absent or
// null (the server leaves null members out).
func (m *members) rawMember(letter byte) []byte {
	v := m.get(letter)
	if string(v) == "null" {
		return nil
	}
	return v
}

// arrayElements appends the text of each element of the JSON array arr
// (already validated) to dst.
func arrayElements(dst []json.RawMessage, arr []byte, letter byte) ([]json.RawMessage, error) {
	if arr[0] != '[' {
		return dst, fmt.Errorf("%w: %q must be an array", ErrProtocol, letter)
	}
	s := jsonscan.New(arr, jsonscan.MaxDepth)
	if err := s.Open(); err != nil {
		return dst, syntaxError(err)
	}
	for done := s.CloseIfEmpty(']'); !done; {
		v, err := s.SkipValue()
		if err != nil {
			return dst, syntaxError(err)
		}
		dst = append(dst, v)
		if done, err = s.Next(']'); err != nil {
			return dst, syntaxError(err)
		}
	}
	return dst, nil
}
