package webpubsub

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

var (
	// ErrInvalidFrame is wrapped by every error Decode returns for bytes
	// that are not a valid frame.
	ErrInvalidFrame = errors.New("webpubsub: invalid frame")
	// ErrUnknownType is wrapped (together with ErrInvalidFrame) when a frame
	// is well formed but of a type, message source or system event this
	// codec does not know; the service may add frames, so a client can
	// choose to skip these.
	ErrUnknownType = errors.New("webpubsub: unknown frame type")
)

// SyntaxError is a frame that is not valid JSON. Offset is the byte where
// the scan stopped.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return "webpubsub: invalid frame: " + e.msg + " at offset " + strconv.Itoa(e.Offset)
}

func (e *SyntaxError) Unwrap() error { return ErrInvalidFrame }

// frameError is a well-formed frame whose fields are wrong.
type frameError struct {
	msg     string
	unknown bool
}

func (e *frameError) Error() string { return "webpubsub: invalid frame: " + e.msg }

func (e *frameError) Unwrap() []error {
	if e.unknown {
		return []error{ErrInvalidFrame, ErrUnknownType}
	}
	return []error{ErrInvalidFrame}
}

func invalid(msg string) error { return &frameError{msg: msg} }

// maxQuoted bounds how much of a peer's text an error repeats, so that a
// log line stays short and never carries a whole payload.
const maxQuoted = 40

// quoteLimited quotes s, cut between runes (an invalid byte counts as one)
// so that the quoted text holds at most maxQuoted characters between its
// quotes, and marks a cut with an ellipsis.
func quoteLimited(s string) string {
	if q := strconv.Quote(s); len(q) <= maxQuoted+2 {
		return q
	}
	end := 0
	for end < len(s) {
		_, size := utf8.DecodeRuneInString(s[end:])
		if len(strconv.Quote(s[:end+size])) > maxQuoted+2 {
			break
		}
		end += size
	}
	return strconv.Quote(s[:end]) + "…"
}
