package signalr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// AppendHandshakeRequest appends the client's first record. It is JSON text
// whatever hub protocol follows.
func AppendHandshakeRequest(dst []byte, p HubProtocol) []byte {
	dst = append(dst, `{"protocol":`...)
	dst = jsonscan.AppendQuotedString(dst, p.Name())
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(p.Version()), 10)
	return append(dst, '}', RecordSeparator)
}

// HandshakeRequest is what a client asks for in its first record.
type HandshakeRequest struct {
	Protocol string `json:"protocol"`
	Version  *int   `json:"version"`
}

// SplitHandshake returns the first record of data (without its separator)
// and what follows it; ok is false until a whole record has arrived.
func SplitHandshake(data []byte) (record, rest []byte, ok bool) {
	i := bytes.IndexByte(data, RecordSeparator)
	if i < 0 {
		return nil, data, false
	}
	return data[:i], data[i+1:], true
}

// ParseHandshakeRequest decodes a client's handshake record.
func ParseHandshakeRequest(record []byte) (HandshakeRequest, error) {
	var r HandshakeRequest
	if err := json.Unmarshal(record, &r); err != nil {
		return r, fmt.Errorf("%w: invalid handshake request: %v", ErrProtocol, err)
	}
	if r.Protocol == "" || r.Version == nil {
		return r, fmt.Errorf("%w: handshake request needs protocol and version", ErrProtocol)
	}
	return r, nil
}

// ParseHandshakeResponse returns the server's error, if it sent one.
func ParseHandshakeResponse(record []byte) error {
	var r struct {
		Error *string          `json:"error"`
		Type  *json.RawMessage `json:"type"`
	}
	if err := json.Unmarshal(record, &r); err != nil {
		return fmt.Errorf("%w: invalid handshake response: %v", ErrProtocol, err)
	}
	if r.Type != nil {
		// A hub message where the handshake answer belongs: the server
		// wrote out of order (the official clients refuse it too).
		return fmt.Errorf("%w: expected a handshake response, got a hub message", ErrProtocol)
	}
	if r.Error != nil {
		return &HandshakeError{Message: *r.Error}
	}
	return nil
}

// HandshakeError is a handshake the server refused, with its reason.
type HandshakeError struct{ Message string }

func (e *HandshakeError) Error() string { return "handshake refused: " + e.Message }

// AppendHandshakeResponse appends the server's answer: {} on success.
func AppendHandshakeResponse(dst []byte, errMsg string) []byte {
	if errMsg == "" {
		return append(dst, '{', '}', RecordSeparator)
	}
	dst = append(dst, `{"error":`...)
	dst = jsonscan.AppendQuotedString(dst, errMsg)
	return append(dst, '}', RecordSeparator)
}
