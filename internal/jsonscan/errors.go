package jsonscan

import "strconv"

// SyntaxError is a text the grammar refuses. Its Error is encoding/json's
// wording, without a prefix.
type SyntaxError struct {
	// Offset is where the scan stopped: the offending byte, or the length
	// of the input when it ended too early.
	Offset int
	// End reports that the input ended before the value did.
	End bool
	// TooDeep reports that objects and arrays nested deeper than the
	// scanner allows.
	TooDeep bool
	msg     string
}

func (e *SyntaxError) Error() string { return e.msg }

// Fail reports the byte at the current position as encoding/json's
// scanner would, with context saying what was expected there.
func (s *Scanner) Fail(context string) error { return s.fail(context) }

func (s *Scanner) fail(context string) *SyntaxError {
	if s.pos >= len(s.data) {
		return s.syntaxError("unexpected end of JSON input")
	}
	return s.syntaxError("invalid character " + quoteChar(s.data[s.pos]) + " " + context)
}

// failInToken is fail inside a literal, a number or an escape, where
// encoding/json's scanner ends the input with a space that it then
// rejects.
func (s *Scanner) failInToken(context string) error {
	c := byte(' ')
	if s.pos < len(s.data) {
		c = s.data[s.pos]
	}
	return s.syntaxError("invalid character " + quoteChar(c) + " " + context)
}

func (s *Scanner) syntaxError(msg string) *SyntaxError {
	end := s.pos >= len(s.data)
	return &SyntaxError{Offset: min(s.pos, len(s.data)), End: end, msg: msg}
}

// quoteChar formats c as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}
