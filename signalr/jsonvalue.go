package signalr

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
	s := jsonScanner{data: obj, inValue: true}
	if s.peek() != '{' || s.open() != nil {
		return nil, false
	}
	for done := s.closeIfEmpty('}'); !done; {
		key, plain, err := s.key()
		if err != nil {
			return nil, false
		}
		start, end, err := s.skipValue()
		if err != nil {
			return nil, false
		}
		if memberNameIs(key, plain, name) {
			value = obj[start:end:end]
		}
		if done, err = s.next('}'); err != nil {
			return nil, false
		}
	}
	if value == nil || s.atEnd() != nil {
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
	return string(appendUnquoted(buf[:0], content)) == want
}

// UnquoteJSON returns the value of the JSON string v (white space around
// it allowed), decoded as encoding/json decodes into a string. ok is false
// when v is not one valid JSON string.
func UnquoteJSON(v []byte) (string, bool) {
	s := jsonScanner{data: v, inValue: true}
	if s.peek() != '"' {
		return "", false
	}
	content, plain, err := s.scanString()
	if err != nil || s.atEnd() != nil {
		return "", false
	}
	return jsonStringValue(content, plain), true
}
