package signalrclient

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hubprobe/hubprobe/signalr"
)

// readAllEvents returns every event r delivers and the error it stops with.
func readAllEvents(r *sseReader) ([]string, error) {
	var events []string
	for {
		data, err := r.next()
		if err != nil {
			return events, err
		}
		events = append(events, string(data))
	}
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"aspnet framing", ":\r\ndata: a\r\n\r\ndata: b\r\ndata: c\r\n\r\n", []string{"a", "b\nc"}},
		{"lf and cr endings", "data: a\n\ndata: b\r\rdata: c\r\n\n", []string{"a", "b", "c"}},
		{"one leading space dropped", "data:x\n\ndata:  y\n\n", []string{"x", " y"}},
		{"colon inside the value", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"field without colon", "data\ndata\n\n", []string{"\n"}},
		{"empty data line", "data:\n\n", []string{""}},
		{"no data, no event", ": ping\n\nid: 3\nretry: 5\n\n", nil},
		{"unknown fields ignored", "foo: bar\ndata: a\nDATA: b\ndatas: c\n\n", []string{"a"}},
		{"named events skipped", "event: x\ndata: a\n\nevent: message\ndata: b\n\nevent:\ndata: c\n\n", []string{"b", "c"}},
		{"last event field wins", "event: x\nevent: message\ndata: a\n\n", []string{"a"}},
		{"byte order mark dropped", "\xEF\xBB\xBFdata: a\n\n", []string{"a"}},
		{"partial byte order mark is a field name", "\xEF\xBBdata: a\n\ndata: b\n\n", []string{"b"}},
		{"cut-off event dropped at the end", "data: a\n\ndata: b\n", []string{"a"}},
		{"blank lines between events", "\n\r\n\rdata: a\n\n\n", []string{"a"}},
	} {
		for _, chunk := range []int{1, 2, 3, 1000} {
			r := newSSEReader(chunked(tc.in, chunk), 1<<10)
			got, err := readAllEvents(r)
			if err != io.EOF || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s (chunks of %d): %q, %v; want %q", tc.name, chunk, got, err, tc.want)
			}
		}
	}
}

// chunked reads s in pieces of n bytes.
func chunked(s string, n int) io.Reader {
	if n == 1 {
		return iotest.OneByteReader(strings.NewReader(s))
	}
	return &chunkReader{data: []byte(s), n: n}
}

type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestSSEReaderBounds(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		events   int
	}{
		{"data at the limit", "data: " + strings.Repeat("a", 16) + "\n\n", 1},
		{"joined lines at the limit", "data: " + strings.Repeat("a", 7) + "\ndata: " + strings.Repeat("b", 8) + "\n\n", 1},
		{"data over the limit", "data: " + strings.Repeat("a", 17) + "\n\n", 0},
		{"joined lines over the limit", "data: " + strings.Repeat("a", 8) + "\ndata: " + strings.Repeat("b", 8) + "\n\n", 0},
		{"over the limit before the line ends", "data: ok\n\ndata: " + strings.Repeat("a", 100), 1},
		{"long comment", ":" + strings.Repeat("c", 40) + "\n", 0},
		{"long field name", strings.Repeat("f", 40), 0},
	} {
		r := newSSEReader(strings.NewReader(tc.in), 16)
		got, err := readAllEvents(r)
		want := error(io.EOF)
		if tc.events != 1 || strings.HasSuffix(tc.name, "before the line ends") {
			want = signalr.ErrProtocol
		}
		if len(got) != tc.events || !errors.Is(err, want) {
			t.Errorf("%s: %d events, %v; want %d, %v", tc.name, len(got), err, tc.events, want)
		}
		if cap(r.data) > 17 {
			t.Errorf("%s: data buffer grew to %d", tc.name, cap(r.data))
		}
	}
}

func TestSSEReaderStopsAtReadError(t *testing.T) {
	boom := errors.New("boom")
	r := newSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 64)
	got, err := readAllEvents(r)
	if !reflect.DeepEqual(got, []string{"a"}) || err != boom {
		t.Errorf("%q, %v", got, err)
	}
}

// referenceEvents parses a whole event stream the plain way, line by
// line, with the reader's bounds: the events delivered before the first
// line that breaks a bound, and whether one did.
func referenceEvents(in []byte, maxData, maxLine int) (events []string, overLimit bool) {
	in = bytes.TrimPrefix(in, utf8BOM[:])
	var data []byte
	var eventType string
	for len(in) > 0 {
		end := bytes.IndexAny(in, "\r\n")
		line, terminated := in, end >= 0
		if terminated {
			line = in[:end]
			crlf := in[end] == '\r' && end+1 < len(in) && in[end+1] == '\n'
			in = in[end+1:]
			if crlf {
				in = in[1:]
			}
		} else {
			in = nil
		}
		if len(line) > maxLine {
			return events, true
		}
		field, value, hasColon := bytes.Cut(line, []byte{':'})
		if hasColon {
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		if !terminated {
			return events, string(field) == "data" && len(value) > 0 && len(data)+len(value) > maxData
		}
		switch {
		case len(line) == 0:
			if len(data) > 0 && (eventType == "" || eventType == "message") {
				events = append(events, string(data[:len(data)-1]))
			}
			data, eventType = nil, ""
		case line[0] == ':':
		case string(field) == "data":
			if len(data)+len(value) > maxData {
				return events, true
			}
			data = append(append(data, value...), '\n')
		case string(field) == "event":
			eventType = string(value)
		}
	}
	return events, false
}

func FuzzSSEReader(f *testing.F) {
	for _, seed := range []string{
		":\r\ndata: {\"type\":6}\x1e\r\n\r\n",
		"data: a\ndata: b\n\nevent: x\ndata: c\n\n",
		"data: a\r\rdata:b\r\n\r\n: comment\r\n",
		"\xEF\xBB\xBFdata: a\n\n",
		"\xEF\xBBdata: a\n\n",
		"data\n\nevent\ndata:\n\n",
		"data: " + strings.Repeat("x", 40) + "\n\n",
		":" + strings.Repeat("y", 80) + "\n",
		"id: 1\nretry: 2\nfoo\n\n\r\n\n",
	} {
		f.Add([]byte(seed), uint8(1))
		f.Add([]byte(seed), uint8(5))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		const maxData = 32
		n := 1 + int(chunk)%64
		r := newSSEReader(&chunkReader{data: bytes.Clone(in), n: n}, maxData)
		var got []string
		var err error
		for {
			var data []byte
			data, err = r.next()
			if err != nil {
				break
			}
			if len(data) > maxData {
				t.Fatalf("event of %d bytes", len(data))
			}
			got = append(got, string(data))
		}
		if cap(r.data) > maxData+1 || len(r.buf) != sseReadBuffer {
			t.Fatalf("buffers grew: data %d, read %d", cap(r.data), len(r.buf))
		}
		want, overLimit := referenceEvents(in, maxData, maxData+sseLineSlack)
		if overLimit != errors.Is(err, signalr.ErrProtocol) || (!overLimit && err != io.EOF) {
			t.Fatalf("err %v, reference over limit: %v", err, overLimit)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("events %q, reference %q", got, want)
		}
	})
}
