package signalr

import "github.com/hubprobe/hubprobe/internal/jsonscan"

// The hub reads a few values inside message arguments: the routing member
// of a payload, a group name. These functions read them with the scanner
// that reads records, so every byte a client sends passes through the one
// JSON grammar, fuzzed against encoding/json.

// JSONMember returns the text of the value of the top-level member called
// name in the JSON object obj (white space around it allowed). A member
// matches when its unescaped name equals name, as encoding/json matches map
// keys; a name given twice yields the later value, as encoding/json and
// .NET's dictionaries keep it. ok is false when obj is not one valid JSON
// object or has no such member.
func JSONMember(obj []byte, name string) (value []byte, ok bool) {
	s := jsonscan.New(obj, jsonscan.MaxDepth)
	if s.Peek() != '{' || s.Open() != nil {
		return nil, false
	}
	for done := s.CloseIfEmpty('}'); !done; {
		key, plain, err := s.Key()
		if err != nil {
			return nil, false
		}
		v, err := s.SkipValue()
		if err != nil {
			return nil, false
		}
		if memberNameIs(key, plain, name) {
			value = v
		}
		if done, err = s.Next('}'); err != nil {
			return nil, false
		}
	}
	if value == nil || s.End() != nil {
		return nil, false
	}
	return value, true
}

// memberNameIs compares scanned name content with want, unescaped.
func memberNameIs(content []byte, plain bool, want string) bool {
	if plain {
		return string(content) == want
	}
	var buf [64]byte
	return string(jsonscan.AppendUnquoted(buf[:0], content)) == want
}

// UnquoteJSON returns the value of the JSON string v (white space around
// it allowed), decoded as encoding/json decodes into a string. ok is false
// when v is not one valid JSON string.
func UnquoteJSON(v []byte) (string, bool) {
	s := jsonscan.New(v, jsonscan.MaxDepth)
	if s.Peek() != '"' {
		return "", false
	}
	content, plain, err := s.ScanString()
	if err != nil || s.End() != nil {
		return "", false
	}
	return jsonscan.StringValue(content, plain), true
}
