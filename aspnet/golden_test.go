package aspnet

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The golden frames are written as the SignalR 2.4.3 server writes them
// (member order, Json.NET's numbers, the transports' framing) and as the
// jquery.signalR 2.4.3 client's JSON.stringify writes its invocations.
// Each decodes and encodes back byte for byte.
func TestGoldenFramesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/frames/*")
	if err != nil || len(files) != 25 {
		t.Fatalf("golden frames: %d files, %v", len(files), err)
	}
	for _, file := range files {
		in, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(file)
		out, err := reencode(name, in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(out, in) {
			t.Errorf("%s: re-encoded as\n%q\nwant\n%q", name, out, in)
		}
	}
}

// reencode decodes a golden file by the kind its name gives and encodes
// what it decoded.
func reencode(name string, in []byte) ([]byte, error) {
	switch {
	case strings.HasPrefix(name, "server-envelope-"), strings.HasPrefix(name, "server-result-"):
		return reencodeFrame(in)
	case strings.HasPrefix(name, "client-invocation-"):
		var inv Invocation
		err := DecodeInvocation(in, &inv)
		return AppendInvocation(nil, &inv), err
	case name == "client-connectiondata.json":
		hubs, err := DecodeConnectionData(in)
		return AppendConnectionData(nil, hubs...), err
	case strings.HasPrefix(name, "server-negotiate"):
		return reencodeNegotiate(in)
	case name == "server-start.json":
		return []byte(StartResponse), CheckStartResponse(in)
	case name == "server-ping.json":
		return []byte(PingResponse), CheckPingResponse(in)
	case name == "stream-sse.txt":
		return reencodeSSE(in)
	case name == "stream-foreverframe.html":
		return reencodeForeverFrame(in)
	}
	return nil, errUnknownGolden
}

var errUnknownGolden = os.ErrNotExist

func reencodeFrame(in []byte) ([]byte, error) {
	var f Frame
	if err := DecodeFrame(in, &f); err != nil {
		return nil, err
	}
	return appendFrame(nil, &f), nil
}

func appendFrame(dst []byte, f *Frame) []byte {
	if f.Kind == ResultFrame {
		return AppendHubResult(dst, &f.Result)
	}
	return AppendEnvelope(dst, &f.Envelope)
}

func reencodeNegotiate(in []byte) ([]byte, error) {
	n, err := DecodeNegotiate(in)
	if err != nil {
		return nil, err
	}
	if n.IsRedirect() {
		return AppendRedirect(nil, n.RedirectURL, n.AccessToken), nil
	}
	return AppendNegotiate(nil, &n), nil
}

func reencodeSSE(in []byte) ([]byte, error) {
	var out []byte
	for {
		data, rest, ok := NextSSEData(in)
		if !ok {
			return out, nil
		}
		in = rest
		switch {
		case string(data) == SSEInitializedData:
			out = append(out, SSEInitialized...)
		case string(data) == KeepAlive:
			out = append(out, SSEKeepAlive...)
		default:
			frame, err := reencodeFrame(data)
			if err != nil {
				return nil, err
			}
			out = AppendSSEData(out, frame)
		}
	}
}

func reencodeForeverFrame(in []byte) ([]byte, error) {
	id, in, ok, err := ParseForeverFramePreamble(in)
	if !ok || err != nil {
		return nil, err
	}
	out := AppendForeverFramePreamble(nil, id)
	for {
		script, rest, ok, err := NextForeverFrameScript(in)
		if err != nil || !ok {
			return out, err
		}
		in = rest
		if string(script) == KeepAlive {
			out = append(out, ForeverFrameKeepAlive...)
			continue
		}
		frame, err := reencodeFrame(script)
		if err != nil {
			return nil, err
		}
		out = AppendForeverFrameScript(out, frame)
	}
}
