package aspnethub

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/aspnet"
)

var updateCapture = flag.Bool("update", false, "rewrite the golden exchange captured from the official JavaScript client")

// The exchange the official client's first connection had with the hub on
// WebSockets, kept among the codec's golden frames.
const (
	capturedExchange     = "../../../aspnet/testdata/frames/exchange-jsclient-websockets.txt"
	goldenConnectionData = "../../../aspnet/testdata/frames/client-connectiondata.json"
	goldenEcho           = "../../../aspnet/testdata/frames/client-invocation-echo.json"
	// standInID replaces the other connection's id, which the captured
	// SendToConnection calls name.
	standInID = "BBBBBBBBBBBBBBBBBBBBBB"
)

// checkCapture holds what the official client sent and received to the
// committed golden files: its connectionData byte for byte, each frame
// decoded and encoded back byte for byte, and the exchange as a whole.
func checkCapture(t *testing.T, r jsResult) {
	t.Helper()
	if r.Capture == nil || len(r.Capture.Frames) == 0 {
		t.Fatalf("%s: nothing captured", r.Name)
	}
	if want, _ := os.ReadFile(goldenConnectionData); r.Capture.ConnectionData != string(want) {
		t.Errorf("the client's connectionData %q, the golden file's %q", r.Capture.ConnectionData, want)
	}
	checkEchoShape(t, r.Capture.Frames)
	exchange := normalizeExchange(r.Capture.Frames, r.IDs["b"])
	for _, line := range strings.Split(strings.TrimSuffix(exchange, "\n"), "\n") {
		if out, err := reencodeCaptured(line); err != nil || out != line {
			t.Errorf("captured %s\n re-encoded as %s (%v)", line, out, err)
		}
	}
	if *updateCapture {
		if err := os.WriteFile(capturedExchange, []byte(exchange), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, _ := os.ReadFile(capturedExchange); !bytes.Equal(want, []byte(exchange)) {
		t.Errorf("the exchange differs from %s (go test -run TestClassicJSClients -update rewrites it):\n%s", capturedExchange, exchange)
	}
}

// normalizeExchange drops keep-alives, puts the stand-in for the other
// connection's id, and sorts the hub's frames between two client frames
// (an invocation's result and the messages it caused race to the socket).
func normalizeExchange(frames []string, otherID string) string {
	var out, received []string
	flush := func() {
		slices.Sort(received)
		out = append(out, received...)
		received = received[:0]
	}
	for _, f := range frames {
		f = strings.ReplaceAll(f, otherID, standInID)
		switch {
		case f == "< "+aspnet.KeepAlive:
		case strings.HasPrefix(f, "< "):
			received = append(received, f)
		default:
			flush()
			out = append(out, f)
		}
	}
	flush()
	return strings.Join(out, "\n") + "\n"
}

// reencodeCaptured decodes one captured line ("> " what the client sent,
// "< " what it received) and encodes it back.
func reencodeCaptured(line string) (string, error) {
	dir, frame, _ := strings.Cut(line, " ")
	if dir == ">" {
		var inv aspnet.Invocation
		err := aspnet.DecodeInvocation([]byte(frame), &inv)
		return dir + " " + string(aspnet.AppendInvocation(nil, &inv)), err
	}
	var f aspnet.Frame
	if err := aspnet.DecodeFrame([]byte(frame), &f); err != nil {
		return "", err
	}
	if f.Kind == aspnet.ResultFrame {
		return dir + " " + string(aspnet.AppendHubResult(nil, &f.Result)), nil
	}
	return dir + " " + string(aspnet.AppendEnvelope(nil, &f.Envelope)), nil
}

// checkEchoShape holds the committed Echo invocation, written from the
// client's source, to the first one the client sent: with the captured
// arguments it must be the same bytes (member order, hub name, a numeric
// I).
func checkEchoShape(t *testing.T, frames []string) {
	t.Helper()
	i := slices.IndexFunc(frames, func(f string) bool { return strings.Contains(f, `"M":"Echo"`) })
	golden, err := os.ReadFile(goldenEcho)
	var sent, fixture aspnet.Invocation
	if i < 0 || err != nil || aspnet.DecodeInvocation(golden, &fixture) != nil || aspnet.DecodeInvocation([]byte(frames[i][2:]), &sent) != nil {
		t.Fatalf("no Echo to compare (%v)", err)
	}
	fixture.Args = sent.Args
	if got := string(aspnet.AppendInvocation(nil, &fixture)); got != frames[i][2:] {
		t.Errorf("%s with the client's arguments is %s; the client sent %s", goldenEcho, got, frames[i][2:])
	}
}
