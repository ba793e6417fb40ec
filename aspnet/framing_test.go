package aspnet

import (
	"errors"
	"reflect"
	"testing"
)

// sseEvents reads every event of stream, fed to the parser one byte more
// at a time as a network read would hand it over.
func sseEvents(stream []byte) []string {
	var events []string
	var buf []byte
	for _, c := range stream {
		buf = append(buf, c)
		for {
			data, rest, ok := NextSSEData(buf)
			if !ok {
				break
			}
			events = append(events, string(data))
			buf = rest
		}
	}
	return events
}

func TestSSEEventsArriveWhole(t *testing.T) {
	got := sseEvents(golden(t, "stream-sse.txt"))
	if len(got) != 4 || got[0] != SSEInitializedData || got[2] != KeepAlive {
		t.Fatalf("got %q", got)
	}
	// Line breaks of any kind, comments, other fields, and data in lines.
	got = sseEvents([]byte(": hi\r\nid: 1\rdata: a\r\ndata:b\n\nevent: x\n\ndata\n\n"))
	if want := []string{"a\nb", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestForeverFrameScriptsArriveWhole(t *testing.T) {
	stream := golden(t, "stream-foreverframe.html")
	var frames []string
	var frameID uint32
	started := false
	var buf []byte
	for _, c := range stream {
		buf = append(buf, c)
		if !started {
			id, rest, ok, err := ParseForeverFramePreamble(buf)
			if err != nil {
				t.Fatalf("after %d bytes: %v", len(buf), err)
			}
			if !ok {
				continue
			}
			frameID, buf, started = id, rest, true
		}
		for {
			frame, rest, ok, err := NextForeverFrameScript(buf)
			if err != nil {
				t.Fatalf("after %q: %v", buf, err)
			}
			if !ok {
				break
			}
			frames = append(frames, string(frame))
			buf = rest
		}
	}
	if frameID != 3 || len(frames) != 3 || frames[1] != KeepAlive {
		t.Fatalf("frame id %d, frames %q", frameID, frames)
	}
}

func TestForeverFrameScriptEscapesMarkup(t *testing.T) {
	got := string(AppendForeverFrameScript(nil, []byte(`{"M":["</script><b>"]}`)))
	if want := `<script>r(c, {"M":["\u003c/script\u003e\u003cb\u003e"]});</script>` + "\r\n"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestForeverFrameRejectsOtherPages(t *testing.T) {
	bad := [][]byte{
		[]byte("<html>"),
		append([]byte(foreverFramePrefix), "12345678901"...),
		append([]byte(foreverFramePrefix), "1x') : null"...),
		append([]byte(foreverFramePrefix), "1') : nil"...),
	}
	for _, in := range bad {
		if _, _, _, err := ParseForeverFramePreamble(in); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q gave %v", in, err)
		}
	}
	for _, in := range []string{"<p>", "<script>alert(1)</script>", "<script>r(c, {}</script>"} {
		if _, _, _, err := NextForeverFrameScript([]byte(in)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q gave %v", in, err)
		}
	}
}
