package jsonscan

// BeginsNumber reports whether a value starting with c is a number.
func BeginsNumber(c byte) bool { return c == '-' || isDigit(c) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(d []byte, i int) int {
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

// ScanNumber consumes a number and returns its text; integer reports that
// it has neither a fraction nor an exponent.
func (s *Scanner) ScanNumber() (text []byte, integer bool, err error) {
	d, start, i := s.data, s.pos, s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		i = skipDigits(d, i+1)
	default:
		s.pos = i
		return nil, false, s.failInToken("in numeric literal")
	}
	integer = true
	if i < len(d) && d[i] == '.' {
		integer = false
		if i = skipDigits(d, i+1); !isDigit(d[i-1]) {
			s.pos = i
			return nil, false, s.failInToken("after decimal point in numeric literal")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i = skipDigits(d, i); !isDigit(d[i-1]) {
			s.pos = i
			return nil, false, s.failInToken("in exponent of numeric literal")
		}
	}
	s.pos = i
	return s.Since(start), integer, nil
}

// ParseUint returns the value of text as strconv.ParseUint(text, 10, 64)
// does: decimal digits only, no sign, no overflow.
func ParseUint(text []byte) (uint64, bool) {
	const cutoff = (1<<64-1)/10 + 1
	if len(text) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range text {
		if !isDigit(c) || n >= cutoff {
			return 0, false
		}
		n1 := n*10 + uint64(c-'0')
		if n1 < n*10 {
			return 0, false
		}
		n = n1
	}
	return n, true
}

// ParseInt returns the value of the text of an integer number (an
// optional minus, then decimal digits) when it fits in an int64.
func ParseInt(text []byte) (int64, bool) {
	neg := len(text) > 0 && text[0] == '-'
	if neg {
		text = text[1:]
	}
	n, ok := ParseUint(text)
	switch {
	case !ok || n > 1<<63 || (!neg && n == 1<<63):
		return 0, false
	case neg:
		return -int64(n), true
	}
	return int64(n), true
}
