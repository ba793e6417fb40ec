package aspnet

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// AppendConnectionData appends the connectionData query value naming the
// hubs a client subscribes to, as the JavaScript client writes it: hub
// names lowercased, [{"name":"signalrbench"}].
func AppendConnectionData(dst []byte, hubs ...string) []byte {
	dst = append(dst, '[')
	for i, hub := range hubs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = jsonscan.AppendQuotedString(dst, strings.ToLower(hub))
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// DecodeConnectionData returns the hub names of a connectionData value:
// a JSON array of objects, each with a string name (matched without
// regard to case, as the server's serializer matches it).
func DecodeConnectionData(data []byte) ([]string, error) {
	elements, err := arrayOf(data)
	if err != nil {
		return nil, err
	}
	hubs := make([]string, 0, len(elements))
	for _, element := range elements {
		var name string
		err := walkObject(element, func(key []byte, plain bool, value []byte) {
			if plain && strings.EqualFold(string(key), "name") && value[0] == '"' {
				name = stringValue(value)
			}
		})
		if err != nil || name == "" {
			return nil, fmt.Errorf("%w: connectionData must name each hub", ErrProtocol)
		}
		hubs = append(hubs, name)
	}
	return hubs, nil
}

// arrayOf validates data as one JSON array and returns its elements.
func arrayOf(data []byte) ([]json.RawMessage, error) {
	s := jsonscan.New(data, jsonscan.MaxDepth)
	if s.Peek() != '[' {
		return nil, fmt.Errorf("%w: connectionData must be a JSON array", ErrProtocol)
	}
	arr, err := s.SkipValue()
	if err == nil {
		err = s.End()
	}
	if err != nil {
		return nil, syntaxError(err)
	}
	return arrayElements(nil, arr, 'A')
}
