// Package jsonscan is hubprobe's one JSON reader, and its one JSON string
// writer (AppendQuoted). Every JSON text a peer
// sends (SignalR hub protocol records, the values inside their arguments,
// Web PubSub frames) is validated by its Scanner, in a single pass with the
// grammar encoding/json accepts: only ' ', '\t', '\n', '\r' as white space,
// no control bytes inside strings, and any other byte, even invalid UTF-8,
// allowed in strings.
//
// The Scanner reports values as slices of its input and never allocates
// while the input is valid. Callers walk objects and arrays themselves
// (Open, Key, Next) and read the members they know; SkipValue validates the
// rest. Errors are *SyntaxError, with encoding/json's wording; each
// protocol phrases them for its own peers.
package jsonscan

// MaxDepth is encoding/json's nesting limit: a scanner built with it
// rejects exactly the texts encoding/json rejects.
const MaxDepth = 10000

// Scanner reads one JSON text from the start of its input.
type Scanner struct {
	data     []byte
	pos      int
	depth    int
	maxDepth int
}

// New returns a Scanner over data that allows objects and arrays to nest
// maxDepth levels.
func New(data []byte, maxDepth int) Scanner {
	return Scanner{data: data, maxDepth: maxDepth}
}

// Offset is the position of the next byte to read.
func (s *Scanner) Offset() int { return s.pos }

// Since returns the text read from offset start up to the current
// position, capped so that appending to it cannot overwrite the input.
func (s *Scanner) Since(start int) []byte { return s.data[start:s.pos:s.pos] }

func (s *Scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// Peek skips white space and returns the next byte, or 0 at the end; a NUL
// byte outside a string is invalid wherever a value may start.
func (s *Scanner) Peek() byte {
	s.skipSpace()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// End checks that only white space follows the value just read.
func (s *Scanner) End() error {
	if s.skipSpace(); s.pos != len(s.data) {
		return s.Fail("after top-level value")
	}
	return nil
}

func (s *Scanner) expect(c byte, context string) error {
	if s.Peek() != c {
		return s.Fail(context)
	}
	s.pos++
	return nil
}

// Open consumes the '{' or '[' that Peek returned and counts the nesting
// level.
func (s *Scanner) Open() error {
	s.depth++
	if s.depth > s.maxDepth {
		err := s.fail("exceeded max depth")
		err.TooDeep = true
		return err
	}
	s.pos++
	return nil
}

// CloseIfEmpty consumes closer if it comes next, ending the object or
// array just opened.
func (s *Scanner) CloseIfEmpty(closer byte) bool {
	if s.Peek() != closer {
		return false
	}
	s.pos++
	s.depth--
	return true
}

// Next consumes the ',' before another member or element, or closer ('}'
// or ']'), which ends the object or array: done is true then, and after
// an error.
func (s *Scanner) Next(closer byte) (done bool, err error) {
	switch s.Peek() {
	case ',':
		s.pos++
		return false, nil
	case closer:
		s.pos++
		s.depth--
		return true, nil
	}
	if closer == '}' {
		return true, s.Fail("after object key:value pair")
	}
	return true, s.Fail("after array element")
}

// Key consumes a member name and the colon after it. The name is string
// content as ScanString returns it.
func (s *Scanner) Key() (name []byte, plain bool, err error) {
	if s.Peek() != '"' {
		return nil, false, s.Fail("looking for beginning of object key string")
	}
	if name, plain, err = s.ScanString(); err != nil {
		return nil, false, err
	}
	if s.pos < len(s.data) && s.data[s.pos] == ':' {
		s.pos++ // the colon mostly follows the name at once
		return name, plain, nil
	}
	return name, plain, s.expect(':', "after object key")
}

// SkipValue validates one value of any kind and returns its text, capped
// as Since caps it. The first byte of the text tells the kind: '{', '[',
// '"', 't', 'f', 'n', or what BeginsNumber accepts.
func (s *Scanner) SkipValue() (value []byte, err error) {
	s.skipSpace()
	start := s.pos
	err = s.skipValue()
	return s.Since(start), err
}

// skipValue is SkipValue without the text, for the values inside the
// objects and arrays it skips.
func (s *Scanner) skipValue() (err error) {
	switch c := s.Peek(); {
	case c == '{':
		err = s.skipObject()
	case c == '[':
		err = s.skipArray()
	case c == '"':
		_, _, err = s.ScanString()
	case BeginsNumber(c):
		_, _, err = s.ScanNumber()
	case c == 't':
		err = s.ScanLiteral("true")
	case c == 'f':
		err = s.ScanLiteral("false")
	case c == 'n':
		err = s.ScanLiteral("null")
	default:
		err = s.Fail("looking for beginning of value")
	}
	return err
}

func (s *Scanner) skipObject() error {
	if err := s.Open(); err != nil || s.CloseIfEmpty('}') {
		return err
	}
	for {
		if _, _, err := s.Key(); err != nil {
			return err
		}
		if err := s.skipValue(); err != nil {
			return err
		}
		if done, err := s.Next('}'); done {
			return err
		}
	}
}

func (s *Scanner) skipArray() error {
	if err := s.Open(); err != nil || s.CloseIfEmpty(']') {
		return err
	}
	for {
		if err := s.skipValue(); err != nil {
			return err
		}
		if done, err := s.Next(']'); done {
			return err
		}
	}
}

// ScanLiteral consumes true, false or null; the caller has seen its first
// byte.
func (s *Scanner) ScanLiteral(lit string) error {
	if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return nil
	}
	for i := 1; i < len(lit); i++ {
		if s.pos+i >= len(s.data) || s.data[s.pos+i] != lit[i] {
			s.pos += i
			return s.failInToken("in literal " + lit + " (expecting " + quoteChar(lit[i]) + ")")
		}
	}
	return s.failInToken("in literal " + lit)
}
