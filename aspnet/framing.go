package aspnet

import (
	"bytes"
	"fmt"
	"strconv"
)

// KeepAlive is the keep-alive frame of every transport: an empty envelope.
const KeepAlive = "{}"

// Server-Sent Events framing, as ServerSentEventsTransport writes it. The
// init and keep-alive events end in "\n\n"; a frame's event ends in the
// host's line break twice, "\r\n\r\n" on Windows, where ASP.NET SignalR
// runs.
const (
	SSEInitialized = "data: initialized\n\n"
	SSEKeepAlive   = "data: {}\n\n"
	// SSEInitializedData is the init event's data.
	SSEInitializedData = "initialized"
)

// AppendSSEData appends frame as one Server-Sent Event.
func AppendSSEData(dst, frame []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, frame...)
	return append(dst, "\r\n\r\n"...)
}

// NextSSEData reads the next event of an event stream from buf: its data
// (the data lines' values joined by "\n") and the bytes after it. ok is
// false when buf holds no complete event yet. Comments, other fields and
// events without data are skipped, as EventSource skips them.
func NextSSEData(buf []byte) (data, rest []byte, ok bool) {
	var lines [][]byte
	for {
		line, after, complete := nextLine(buf)
		if !complete {
			return nil, buf, false
		}
		buf = after
		if len(line) == 0 {
			if lines != nil {
				return bytes.Join(lines, []byte{'\n'}), buf, true
			}
			continue
		}
		if value, isData := sseField(line, "data"); isData {
			lines = append(lines, value)
		}
	}
}

// nextLine splits buf after its first line break: "\r\n", "\n" or "\r".
// A "\r" at the very end may be the start of "\r\n": incomplete.
func nextLine(buf []byte) (line, rest []byte, complete bool) {
	i := bytes.IndexAny(buf, "\r\n")
	switch {
	case i < 0, buf[i] == '\r' && i+1 == len(buf):
		return nil, buf, false
	case buf[i] == '\r' && buf[i+1] == '\n':
		return buf[:i], buf[i+2:], true
	}
	return buf[:i], buf[i+1:], true
}

// sseField returns the value of line when it is field name: after the
// colon, one leading space dropped.
func sseField(line []byte, name string) ([]byte, bool) {
	if !bytes.HasPrefix(line, []byte(name)) {
		return nil, false
	}
	value := line[len(name):]
	switch {
	case len(value) == 0:
		return value, true
	case value[0] != ':':
		return nil, false
	}
	return bytes.TrimPrefix(value[1:], []byte{' '}), true
}

// Forever Frame framing, as ForeverFrameTransport writes it: an HTML page
// whose script finds the parent window's connection by frame id, then one
// <script> per frame calling r(c, frame).
const (
	foreverFramePrefix = "<!DOCTYPE html><html><head><title>SignalR Forever Frame Transport Stream</title>\r\n" +
		"<script>\r\n" +
		"    var $ = window.parent.jQuery,\r\n" +
		"        ff = $ ? $.signalR.transports.foreverFrame : null,\r\n" +
		"        c =  ff ? ff.getConnection('"
	foreverFrameSuffix = "') : null,\r\n" +
		"        r = ff ? ff.receive : function() {};\r\n" +
		"    ff ? ff.started(c) : '';</script></head><body>\r\n"
	foreverFrameScriptOpen  = "<script>r(c, "
	foreverFrameScriptClose = ");</script>"
	// ForeverFrameKeepAlive is the keep-alive script.
	ForeverFrameKeepAlive = "<script>r(c, {});</script>\n\n"
)

// AppendForeverFramePreamble appends the page that opens a Forever Frame
// stream for the iframe frameID.
func AppendForeverFramePreamble(dst []byte, frameID uint32) []byte {
	dst = append(dst, foreverFramePrefix...)
	dst = strconv.AppendUint(dst, uint64(frameID), 10)
	return append(dst, foreverFrameSuffix...)
}

// AppendForeverFrameScript appends frame as one script. Like the server's
// HTML writer it escapes '<' and '>' (as \u003c and \u003e, the same JSON
// value), so no frame can close the script early.
func AppendForeverFrameScript(dst, frame []byte) []byte {
	dst = append(dst, foreverFrameScriptOpen...)
	for len(frame) > 0 {
		i := bytes.IndexAny(frame, "<>")
		if i < 0 {
			dst = append(dst, frame...)
			break
		}
		dst = append(dst, frame[:i]...)
		if frame[i] == '<' {
			dst = append(dst, `\u003c`...)
		} else {
			dst = append(dst, `\u003e`...)
		}
		frame = frame[i+1:]
	}
	dst = append(dst, foreverFrameScriptClose...)
	return append(dst, "\r\n"...)
}

// ParseForeverFramePreamble reads the page that opens a Forever Frame
// stream: the frame id it names and the bytes after it. ok is false when
// buf holds only the start of the page; anything else is an error.
func ParseForeverFramePreamble(buf []byte) (frameID uint32, rest []byte, ok bool, err error) {
	if !hasPrefixSoFar(buf, foreverFramePrefix) {
		return 0, nil, false, fmt.Errorf("%w: not a Forever Frame page", ErrProtocol)
	}
	if len(buf) < len(foreverFramePrefix) {
		return 0, buf, false, nil
	}
	after := buf[len(foreverFramePrefix):]
	end := bytes.IndexByte(after, '\'')
	if end < 0 && len(after) > len("4294967295") {
		return 0, nil, false, fmt.Errorf("%w: bad Forever Frame id", ErrProtocol)
	}
	if end < 0 {
		return 0, buf, false, nil
	}
	id, perr := strconv.ParseUint(string(after[:end]), 10, 32)
	if perr != nil {
		return 0, nil, false, fmt.Errorf("%w: bad Forever Frame id", ErrProtocol)
	}
	tail := after[end:]
	if !hasPrefixSoFar(tail, foreverFrameSuffix) {
		return 0, nil, false, fmt.Errorf("%w: not a Forever Frame page", ErrProtocol)
	}
	if len(tail) < len(foreverFrameSuffix) {
		return 0, buf, false, nil
	}
	return uint32(id), tail[len(foreverFrameSuffix):], true, nil
}

// NextForeverFrameScript reads the next script of a Forever Frame stream
// (after the preamble): the frame it carries and the bytes after it. ok
// is false when buf holds no complete script yet.
func NextForeverFrameScript(buf []byte) (frame, rest []byte, ok bool, err error) {
	body := bytes.TrimLeft(buf, "\r\n")
	if !hasPrefixSoFar(body, foreverFrameScriptOpen) {
		return nil, nil, false, fmt.Errorf("%w: expected <script>r(c, …) in the Forever Frame stream", ErrProtocol)
	}
	end := bytes.Index(body, []byte("</script>"))
	if end < 0 {
		return nil, buf, false, nil
	}
	inner := body[:end+len("</script>")]
	if len(inner) < len(foreverFrameScriptOpen)+len(foreverFrameScriptClose) || !bytes.HasSuffix(inner, []byte(foreverFrameScriptClose)) {
		return nil, nil, false, fmt.Errorf("%w: a Forever Frame script must end with );</script>", ErrProtocol)
	}
	frame = inner[len(foreverFrameScriptOpen) : len(inner)-len(foreverFrameScriptClose)]
	return frame, body[end+len("</script>"):], true, nil
}

// hasPrefixSoFar reports whether buf and prefix agree on their common
// length: buf starts with prefix, or is the start of it.
func hasPrefixSoFar(buf []byte, prefix string) bool {
	n := min(len(buf), len(prefix))
	return string(buf[:n]) == prefix[:n]
}
