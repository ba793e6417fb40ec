package signalrclient

import (
	"bytes"
	"fmt"
	"io"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

const (
	// sseReadBuffer is the event stream's read buffer, fixed in size.
	sseReadBuffer = 4096
	// sseLineSlack allows a data line its field name on top of the data.
	sseLineSlack = 16
	// sseMaxReads bounds reads that return nothing, like bufio does.
	sseMaxReads = 100
)

type sseState uint8

const (
	sseLineStart sseState = iota
	sseField              // reading the field name
	sseSpace              // just after the colon, where one space is dropped
	sseValue              // reading the field value
	sseComment            // a line that starts with a colon
)

var (
	utf8BOM  = [3]byte{0xEF, 0xBB, 0xBF}
	lineFeed = []byte{'\n'}
)

// sseReader parses a text/event-stream as the HTML standard's
// server-sent events section defines it: lines end in CRLF, LF or CR; a
// leading byte order mark is dropped; lines starting with a colon are
// comments; a field's value follows the first colon, less one leading
// space; the values of "data" fields join with LF; a blank line ends an
// event. Like EventSource's onmessage, it delivers only events whose type
// is "message" (the default) and only if they had data.
//
// Memory is bounded: the read buffer is fixed, an event's data may not
// exceed maxData bytes, and no line may exceed maxData plus a little;
// either excess is an ErrProtocol.
type sseReader struct {
	src     io.Reader
	srcErr  error
	buf     []byte // unprocessed bytes are buf[r:w]
	r, w    int
	maxData int
	maxLine int

	data     []byte // the event's data so far, each line followed by LF
	named    bool   // the event's type is not "message"
	state    sseState
	lineLen  int
	field    [5]byte // the first bytes of the field name
	fieldLen int
	evType   [7]byte // the first bytes of an "event" field's value
	evLen    int
	skipLF   bool // the last line ended in CR: a LF next belongs to it
	bom      int  // byte order mark bytes seen; -1 once past the start
}

func newSSEReader(src io.Reader, maxData int) *sseReader {
	return &sseReader{src: src, buf: make([]byte, sseReadBuffer), maxData: maxData, maxLine: maxData + sseLineSlack}
}

// next returns the data of the next event, valid until the next call. It
// returns io.EOF when the stream ends; an event cut off by the end is
// dropped, as the standard says.
func (s *sseReader) next() ([]byte, error) {
	if cap(s.data) > clientconn.MaxPooledBuf {
		s.data = nil // one huge event should not pin its buffer
	}
	s.data, s.named = s.data[:0], false
	for {
		if s.r == s.w {
			if err := s.fill(); err != nil {
				return nil, err
			}
		}
		dispatch, err := s.step()
		if err != nil {
			return nil, err
		}
		if dispatch {
			return s.data[:len(s.data)-1], nil
		}
	}
}

func (s *sseReader) fill() error {
	if s.srcErr != nil {
		return s.srcErr
	}
	s.r, s.w = 0, 0
	for range sseMaxReads {
		n, err := s.src.Read(s.buf)
		s.w = n
		if err != nil {
			s.srcErr = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// step consumes some of the buffered bytes (at least one) and reports
// whether an event is ready.
func (s *sseReader) step() (bool, error) {
	b := s.buf[s.r:s.w]
	if s.skipLF {
		s.skipLF = false
		if b[0] == '\n' {
			s.r++
			return false, nil
		}
	}
	if s.bom >= 0 {
		s.skipBOM(b[0])
		return false, nil
	}
	switch s.state {
	case sseLineStart:
		return s.lineStart(b[0])
	case sseField:
		return false, s.readField(b)
	case sseSpace:
		s.state = sseValue
		if b[0] == ' ' {
			return false, s.consume(1)
		}
		return false, nil
	}
	i := indexEOL(b)
	n := i
	if i < 0 {
		n = len(b)
	}
	if s.state == sseValue {
		if err := s.addValue(b[:n]); err != nil {
			return false, err
		}
	}
	if err := s.consume(n); err != nil || i < 0 {
		return false, err
	}
	return false, s.endLine(b[i])
}

// skipBOM drops a byte order mark at the very start of the stream. Bytes
// that began one but did not finish it start a field name instead.
func (s *sseReader) skipBOM(c byte) {
	if c == utf8BOM[s.bom] {
		s.r++
		if s.bom++; s.bom == len(utf8BOM) {
			s.bom = -1
		}
		return
	}
	if s.bom > 0 {
		s.state = sseField
		s.fieldLen = copy(s.field[:], utf8BOM[:s.bom])
		s.lineLen = s.bom
	}
	s.bom = -1
}

func (s *sseReader) lineStart(c byte) (bool, error) {
	switch c {
	case '\r', '\n':
		s.r++
		s.skipLF = c == '\r'
		return s.endEvent(), nil
	case ':':
		s.state = sseComment
		return false, s.consume(1)
	}
	s.state = sseField
	return false, nil
}

func (s *sseReader) readField(b []byte) error {
	i := indexFieldEnd(b)
	n := i
	if i < 0 {
		n = len(b)
	}
	if s.fieldLen < len(s.field) {
		copy(s.field[s.fieldLen:], b[:n])
	}
	s.fieldLen += n
	if err := s.consume(n); err != nil || i < 0 {
		return err
	}
	if b[i] == ':' {
		s.state = sseSpace
		return s.consume(1)
	}
	return s.endLine(b[i]) // a field with no colon has an empty value
}

func (s *sseReader) addValue(v []byte) error {
	switch {
	case s.isField("data"):
		return s.appendData(v, s.maxData)
	case s.isField("event"):
		if s.evLen < len(s.evType) {
			copy(s.evType[s.evLen:], v)
		}
		s.evLen += len(v)
	}
	return nil
}

// endLine consumes the line terminator term and applies the field.
func (s *sseReader) endLine(term byte) error {
	s.r++
	s.skipLF = term == '\r'
	var err error
	switch {
	case s.state == sseComment:
	case s.isField("data"):
		err = s.appendData(lineFeed, s.maxData+1)
	case s.isField("event"):
		s.named = s.evLen != 0 && (s.evLen != len("message") || string(s.evType[:]) != "message")
	}
	s.state, s.lineLen, s.fieldLen, s.evLen = sseLineStart, 0, 0, 0
	return err
}

// endEvent handles a blank line: it reports whether there is an event to
// deliver, and otherwise starts the next one.
func (s *sseReader) endEvent() bool {
	if len(s.data) > 0 && !s.named {
		return true
	}
	s.data, s.named = s.data[:0], false
	return false
}

func (s *sseReader) isField(name string) bool {
	return s.fieldLen == len(name) && string(s.field[:s.fieldLen]) == name
}

func (s *sseReader) consume(n int) error {
	s.r += n
	s.lineLen += n
	if s.lineLen > s.maxLine {
		return fmt.Errorf("%w: event stream line longer than %d bytes", signalr.ErrProtocol, s.maxLine)
	}
	return nil
}

// appendData adds p to the event's data unless that would exceed limit;
// the buffer grows to limit at most.
func (s *sseReader) appendData(p []byte, limit int) error {
	need := len(s.data) + len(p)
	if need > limit {
		return fmt.Errorf("%w: event data larger than %d bytes", signalr.ErrProtocol, s.maxData)
	}
	if need > cap(s.data) {
		grown := make([]byte, len(s.data), min(limit, max(need, 2*cap(s.data), 512)))
		copy(grown, s.data)
		s.data = grown
	}
	s.data = append(s.data, p...)
	return nil
}

func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	head := b
	if i >= 0 {
		head = b[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j
	}
	return i
}

func indexFieldEnd(b []byte) int {
	for i, c := range b {
		if c == ':' || c == '\r' || c == '\n' {
			return i
		}
	}
	return -1
}
