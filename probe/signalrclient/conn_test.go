package signalrclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

func TestHandshakeTimeout(t *testing.T) {
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if readHandshake(t, ws) {
			drainUntilClosed(ws) // never answers
		}
	})
	start := time.Now()
	_, err := dialRaw(t, h, func(o *Options) { o.HandshakeTimeout = 200 * time.Millisecond })
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout || !strings.Contains(err.Error(), "handshake: no response after") {
		t.Fatalf("err = %v, want handshake timeout", err)
	}
	if elapsed := time.Since(start); elapsed < 200*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("gave up after %s, want about 200ms", elapsed)
	}
}

func TestHandshakeContextCancel(t *testing.T) {
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if readHandshake(t, ws) {
			drainUntilClosed(ws)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := Dial(ctx, Options{URL: h.url(), SkipNegotiation: true})
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled handshake", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("returned after %s", elapsed)
	}
}

func TestHandshakeRefused(t *testing.T) {
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if readHandshake(t, ws) {
			_ = writeText(ws, "{\"error\":\"Requested protocol 'json' is not available.\"}\x1e")
		}
	})
	_, err := dialRaw(t, h, nil)
	var ce *clientconn.ConnectError
	var he *signalr.HandshakeError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || !errors.As(err, &he) || he.Message != "Requested protocol 'json' is not available." {
		t.Fatalf("err = %v, want handshake refusal", err)
	}
}

func TestHandshakeGarbage(t *testing.T) {
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if readHandshake(t, ws) {
			_ = writeText(ws, "HTTP/1.1 200 OK\x1e")
		}
	})
	_, err := dialRaw(t, h, nil)
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseHandshake || !errors.Is(err, signalr.ErrProtocol) {
		t.Fatalf("err = %v", err)
	}
}

func TestHandshakeSplitAcrossFramesWithRecordsBehindIt(t *testing.T) {
	got := make(chan string, 2)
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if !readHandshake(t, ws) {
			return
		}
		_ = writeText(ws, "{")
		_ = writeText(ws, "}\x1e{\"type\":1,\"target\":\"OnConnected\",\"arguments\":[\"first\"]}\x1e{\"type\":1,\"target\":\"onconnected\",\"arg")
		_ = writeText(ws, "uments\":[\"second\"]}\x1e")
		drainUntilClosed(ws)
	})
	c, err := dialRaw(t, h, func(o *Options) {
		o.Handlers = map[string]Handler{"OnConnected": func(args []json.RawMessage) { got <- string(args[0]) }}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, want := range []string{`"first"`, `"second"`} {
		select {
		case g := <-got:
			if g != want {
				t.Errorf("handler got %s, want %s", g, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("handler never saw %s", want)
		}
	}
}

// scriptedConn dials a rawHub that accepts the handshake and then runs
// script, and returns the connection.
func scriptedConn(t *testing.T, mod func(*Options), script func(t testing.TB, ws *websocket.Conn)) *Conn {
	t.Helper()
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if acceptHandshake(t, ws) {
			script(t, ws)
		}
	})
	c, err := dialRaw(t, h, mod)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestBadBytesEndTheConnectionWithProtocolError(t *testing.T) {
	cases := map[string]func(ws *websocket.Conn){
		"invalid JSON": func(ws *websocket.Conn) { _ = writeText(ws, "{\"type\":1,]\x1e") },
		"unknown type": func(ws *websocket.Conn) { _ = writeText(ws, "{\"type\":77}\x1e") },
		"binary frame": func(ws *websocket.Conn) { _ = ws.WriteMessage(websocket.BinaryMessage, []byte("{\"type\":6}\x1e")) },
		"completion and error": func(ws *websocket.Conn) {
			_ = writeText(ws, "{\"type\":3,\"invocationId\":\"1\",\"result\":1,\"error\":\"x\"}\x1e")
		},
		"no separator beyond max size": func(ws *websocket.Conn) {
			chunk := strings.Repeat("a", 700)
			_ = writeText(ws, "{\"type\":1,\"target\":\""+chunk)
			_ = writeText(ws, chunk)
		},
		"one frame of many records, last one too big": func(ws *websocket.Conn) {
			_ = writeText(ws, strings.Repeat("{\"type\":6}\x1e", 500)+strings.Repeat("b", 2000))
		},
	}
	for name, misbehave := range cases {
		t.Run(name, func(t *testing.T) {
			c := scriptedConn(t, func(o *Options) { o.MaxMessageSize = 1024 }, func(t testing.TB, ws *websocket.Conn) {
				misbehave(ws)
				drainUntilClosed(ws)
			})
			localtest.WaitDone(t, c, 3*time.Second)
			if err := c.Err(); !errors.Is(err, signalr.ErrProtocol) {
				t.Errorf("Err() = %v, want ErrProtocol", err)
			}
		})
	}
}

func TestManyRecordsInOneFrameWithinLimit(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	all := make(chan struct{})
	c := scriptedConn(t, func(o *Options) {
		o.MaxMessageSize = 1024
		o.Handlers = map[string]Handler{"n": func(args []json.RawMessage) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, string(args[0]))
			if len(seen) == 3000 {
				close(all)
			}
		}}
	}, func(t testing.TB, ws *websocket.Conn) {
		// ~100 KiB in one frame, far above MaxMessageSize, but each record
		// is small: the frame must be consumed record by record.
		var b strings.Builder
		for i := range 3000 {
			b.WriteString("{\"type\":1,\"target\":\"n\",\"arguments\":[" + formatID(uint64(i)) + "]}\x1e")
		}
		_ = writeText(ws, b.String())
		drainUntilClosed(ws)
	})
	select {
	case <-all:
	case <-c.Done():
		t.Fatalf("connection ended: %v", c.Err())
	case <-time.After(3 * time.Second):
		t.Fatal("not all records dispatched")
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[0] != "0" || seen[2999] != "2999" {
		t.Errorf("records out of order: first %s last %s", seen[0], seen[2999])
	}
}

func TestServerCloseWithError(t *testing.T) {
	for _, allow := range []bool{false, true} {
		record := "{\"type\":7,\"error\":\"Connection count reaches limit.\",\"allowReconnect\":false}\x1e"
		if allow {
			record = "{\"type\":7,\"error\":\"Server is shutting down.\",\"allowReconnect\":true}\x1e"
		}
		c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
			_ = writeText(ws, record)
			drainUntilClosed(ws)
		})
		pending := make(chan error, 1)
		go func() {
			_, err := c.Invoke(context.Background(), "Never")
			pending <- err
		}()
		localtest.WaitDone(t, c, 3*time.Second)
		var ce *clientconn.CloseError
		if !errors.As(c.Err(), &ce) || ce.AllowReconnect != allow {
			t.Fatalf("Err() = %#v", c.Err())
		}
		if !allow && ce.Message != "Connection count reaches limit." {
			t.Errorf("message %q", ce.Message)
		}
		select {
		case err := <-pending:
			if !errors.Is(err, clientconn.ErrClosed) || !errors.As(err, &ce) {
				t.Errorf("pending Invoke returned %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("pending Invoke never returned")
		}
	}
}

func TestServerCloseWithoutError(t *testing.T) {
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		_ = writeText(ws, "{\"type\":7}\x1e")
		drainUntilClosed(ws)
	})
	localtest.WaitDone(t, c, 3*time.Second)
	var ce *clientconn.CloseError
	if !errors.As(c.Err(), &ce) || ce.Message != "" {
		t.Errorf("Err() = %v", c.Err())
	}
}

func TestServerTimeout(t *testing.T) {
	c := scriptedConn(t, func(o *Options) { o.ServerTimeout = 200 * time.Millisecond }, func(t testing.TB, ws *websocket.Conn) {
		drainUntilClosed(ws) // silent
	})
	start := time.Now()
	localtest.WaitDone(t, c, 3*time.Second)
	if err := c.Err(); !errors.Is(err, clientconn.ErrServerTimeout) {
		t.Errorf("Err() = %v", err)
	}
	if elapsed := time.Since(start); elapsed < 150*time.Millisecond {
		t.Errorf("timed out after only %s", elapsed)
	}
	if err := c.Send(context.Background(), "x"); !errors.Is(err, clientconn.ErrClosed) || !errors.Is(err, clientconn.ErrServerTimeout) {
		t.Errorf("Send after timeout: %v", err)
	}
}

func TestServerPingsKeepConnectionAlive(t *testing.T) {
	t.Parallel() // slow by design; runs after the goroutine-counting tests
	// 30 pings 50ms apart span three ServerTimeouts.
	pinged := make(chan struct{})
	c := scriptedConn(t, func(o *Options) { o.ServerTimeout = 500 * time.Millisecond }, func(t testing.TB, ws *websocket.Conn) {
		defer drainUntilClosed(ws)
		defer close(pinged)
		for range 30 {
			if writeText(ws, "{\"type\":6}\x1e") != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	<-pinged
	if c.Err() != nil {
		t.Fatalf("connection ended while the server pinged: %v", c.Err())
	}
}

func TestKeepAlivePingsWhenIdle(t *testing.T) {
	pings := make(chan time.Time, 16)
	c := scriptedConn(t, func(o *Options) { o.KeepAliveInterval = 50 * time.Millisecond }, func(t testing.TB, ws *websocket.Conn) {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if string(data) == "{\"type\":6}\x1e" {
				select {
				case pings <- time.Now():
				default:
				}
			}
		}
	})
	deadline := time.After(3 * time.Second)
	for n := 0; n < 3; n++ {
		select {
		case <-pings:
		case <-deadline:
			t.Fatalf("only %d pings", n)
		}
	}
	_ = c
}

// TestKeepAlivePingIsAPingMessage sends the keep-alive's ping by hand
// (its own timer is an hour away; when the keep-alive pings is
// clientconn's KeepAlive test): after a send, the hub reads the message,
// then one Ping, and nothing else.
func TestKeepAlivePingIsAPingMessage(t *testing.T) {
	frames := make(chan string, 4)
	c := scriptedConn(t, func(o *Options) { o.KeepAliveInterval = time.Hour }, func(t testing.TB, ws *websocket.Conn) {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			frames <- string(data)
		}
	})
	if err := c.Send(context.Background(), "Marker"); err != nil {
		t.Fatal(err)
	}
	c.sendKeepAlivePing()
	for _, want := range []string{"{\"type\":1,\"target\":\"Marker\",\"arguments\":[]}\x1e", "{\"type\":6}\x1e"} {
		select {
		case got := <-frames:
			if got != want {
				t.Errorf("server saw %q, want %q", got, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("server never saw %q", want)
		}
	}
	select {
	case extra := <-frames:
		t.Errorf("unexpected frame %q", extra)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestServerInvocationsAndReplies(t *testing.T) {
	replies := make(chan string, 4)
	got := make(chan string, 4)
	c := scriptedConn(t, func(o *Options) {
		o.Handlers = map[string]Handler{"Known": func(args []json.RawMessage) { got <- string(args[0]) }}
	}, func(t testing.TB, ws *websocket.Conn) {
		_ = writeText(ws, "{\"type\":1,\"invocationId\":\"s1\",\"target\":\"Unknown\",\"arguments\":[]}\x1e"+
			"{\"type\":1,\"invocationId\":\"s2\",\"target\":\"KNOWN\",\"arguments\":[5]}\x1e"+
			"{\"type\":4,\"invocationId\":\"s3\",\"target\":\"Known\",\"arguments\":[]}\x1e"+
			"{\"type\":5,\"invocationId\":\"s9\"}\x1e{\"type\":8,\"sequenceId\":1}\x1e")
		for range 3 {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			replies <- string(data)
		}
		drainUntilClosed(ws)
	})
	want := []string{
		"{\"type\":3,\"invocationId\":\"s1\",\"error\":\"the client has no handler for Unknown\"}\x1e",
		"{\"type\":3,\"invocationId\":\"s2\"}\x1e",
		"{\"type\":3,\"invocationId\":\"s3\",\"error\":\"the client does not stream results to the server\"}\x1e",
	}
	for _, w := range want {
		select {
		case r := <-replies:
			if r != w {
				t.Errorf("reply %q, want %q", r, w)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("no reply %q", w)
		}
	}
	if g := <-got; g != "5" {
		t.Errorf("handler got %s", g)
	}
	if c.Err() != nil {
		t.Errorf("connection failed: %v", c.Err())
	}
}

// TestInvocationOutcomes plays a hub that answers each invocation id in a
// different way.
func TestInvocationOutcomes(t *testing.T) {
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			m, err := readMessage(data)
			if err != nil {
				t.Errorf("client sent %q: %v", data, err)
				return
			}
			var reply string
			switch m.Target {
			case "Value":
				reply = "{\"type\":3,\"invocationId\":\"" + m.InvocationID + "\",\"result\":{\"x\":1}}\x1e"
			case "Void":
				reply = "{\"type\":3,\"invocationId\":\"" + m.InvocationID + "\"}\x1e"
			case "Null":
				reply = "{\"type\":3,\"invocationId\":\"" + m.InvocationID + "\",\"result\":null}\x1e"
			case "Fail":
				reply = "{\"type\":3,\"invocationId\":\"" + m.InvocationID + "\",\"error\":\"nope\"}\x1e"
			case "Streamy":
				reply = "{\"type\":2,\"invocationId\":\"" + m.InvocationID + "\",\"item\":1}\x1e"
			case "Slow", "Tick":
				continue
			}
			// Late and unknown completions must be ignored.
			_ = writeText(ws, "{\"type\":3,\"invocationId\":\"999\"}\x1e"+reply)
		}
	})
	ctx := testCtx(t, 5*time.Second)
	if r, err := c.Invoke(ctx, "Value"); err != nil || string(r) != `{"x":1}` {
		t.Errorf("Value: %s, %v", r, err)
	}
	if r, err := c.Invoke(ctx, "Void"); err != nil || r != nil {
		t.Errorf("Void: %q, %v", r, err)
	}
	if r, err := c.Invoke(ctx, "Null"); err != nil || string(r) != "null" {
		t.Errorf("Null: %q, %v", r, err)
	}
	var ie *InvocationError
	if _, err := c.Invoke(ctx, "Fail"); !errors.As(err, &ie) || ie.Message != "nope" {
		t.Errorf("Fail: %v", err)
	}
	if _, err := c.Invoke(ctx, "Streamy"); !errors.Is(err, signalr.ErrProtocol) {
		t.Errorf("Streamy: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.Invoke(short, "Slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Slow: %v", err)
	}
	if c.Err() != nil {
		t.Errorf("connection failed: %v", c.Err())
	}
	if n := pendingCount(c); n != 0 {
		t.Errorf("%d invocations still pending", n)
	}
}

func pendingCount(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls) + len(c.streams)
}

func TestStreamCancel(t *testing.T) {
	cancelled := make(chan string, 1)
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		m, _ := readMessage(data)
		_ = writeText(ws, "{\"type\":2,\"invocationId\":\""+m.InvocationID+"\",\"item\":\"a\"}\x1e")
		if _, data, err = ws.ReadMessage(); err == nil {
			cancelled <- string(data)
		}
		// Items after the cancel are dropped by the client.
		_ = writeText(ws, "{\"type\":2,\"invocationId\":\""+m.InvocationID+"\",\"item\":\"b\"}\x1e")
		drainUntilClosed(ws)
	})
	ctx := testCtx(t, 5*time.Second)
	s, err := c.Stream(ctx, "Forever", nil)
	if err != nil {
		t.Fatal(err)
	}
	if item := <-s.Items(); string(item) != `"a"` {
		t.Errorf("item %s", item)
	}
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-cancelled; got != "{\"type\":5,\"invocationId\":\"1\"}\x1e" {
		t.Errorf("cancel sent %q", got)
	}
	if _, open := <-s.Items(); open {
		t.Error("items still open after Cancel")
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Errorf("Err() = %v", s.Err())
	}
}

func TestStreamContextCancels(t *testing.T) {
	cancelled := make(chan string, 1)
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		for i := 0; i < 2; i++ {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if i == 1 {
				cancelled <- string(data)
			}
		}
		drainUntilClosed(ws)
	})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Stream(ctx, "Forever", []json.RawMessage{raw("1")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, open := <-s.Items():
		if open {
			t.Fatal("unexpected item")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("stream not ended by its context")
	}
	if got := <-cancelled; got != "{\"type\":5,\"invocationId\":\"1\"}\x1e" {
		t.Errorf("cancel sent %q", got)
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Errorf("Err() = %v", s.Err())
	}
}

func TestUploadRules(t *testing.T) {
	frames := make(chan string, 8)
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			frames <- string(data)
		}
	})
	ctx := testCtx(t, 5*time.Second)
	u := c.NewUpload()
	if err := u.Send(ctx, raw("1")); !errors.Is(err, ErrUploadNotStarted) {
		t.Errorf("Send before the invocation: %v", err)
	}
	if err := u.Complete(ctx, ""); !errors.Is(err, ErrUploadNotStarted) {
		t.Errorf("Complete before the invocation: %v", err)
	}
	other := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) { drainUntilClosed(ws) })
	if _, err := other.Stream(ctx, "Up", nil, u); err == nil {
		t.Error("an upload of another connection was accepted")
	}
	s, err := c.Stream(ctx, "Up", nil, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(ctx, "Up", nil, u); err == nil {
		t.Error("one upload attached to two invocations")
	}
	if err := u.Send(ctx, raw(`"x"`)); err != nil {
		t.Fatal(err)
	}
	if err := u.Complete(ctx, "client gave up"); err != nil {
		t.Fatal(err)
	}
	if err := u.Send(ctx, raw("2")); !errors.Is(err, ErrUploadDone) {
		t.Errorf("Send after Complete: %v", err)
	}
	want := []string{
		"{\"type\":4,\"invocationId\":\"2\",\"target\":\"Up\",\"arguments\":[],\"streamIds\":[\"1\"]}\x1e",
		"{\"type\":2,\"invocationId\":\"1\",\"item\":\"x\"}\x1e",
		"{\"type\":3,\"invocationId\":\"1\",\"error\":\"client gave up\"}\x1e",
	}
	for _, w := range want {
		if got := <-frames; got != w {
			t.Errorf("sent %q, want %q", got, w)
		}
	}
	_ = s
}

func TestCleanClose(t *testing.T) {
	var closeRecord string
	var closeCode int
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if !acceptHandshake(t, ws) {
			return
		}
		_, data, _ := ws.ReadMessage()
		closeRecord = string(data)
		_, _, err := ws.ReadMessage() // gorilla answers the close frame itself
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			closeCode = ce.Code
		}
	})
	baseline := runtime.NumGoroutine()
	c, err := dialRaw(t, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	h.finished.Wait()
	if closeRecord != "{\"type\":7}\x1e" || closeCode != websocket.CloseNormalClosure {
		t.Errorf("server saw %q then close code %d", closeRecord, closeCode)
	}
	if c.Err() != nil {
		t.Errorf("Err() after clean Close = %v", c.Err())
	}
	if err := c.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c.Invoke(context.Background(), "x"); !errors.Is(err, clientconn.ErrClosed) {
		t.Errorf("Invoke after Close: %v", err)
	}
	localtest.CheckNoLeak(t, baseline)
}

func TestCloseWhenServerIgnoresCloseFrame(t *testing.T) {
	t.Parallel() // slow by design; runs after the goroutine-counting tests
	release := make(chan struct{})
	defer close(release)
	h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
		if acceptHandshake(t, ws) {
			<-release // reads nothing, answers nothing
		}
	})
	c, err := dialRaw(t, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	localtest.WaitDone(t, c, time.Second)
	if c.Err() != nil {
		t.Errorf("Err() = %v", c.Err())
	}
}

func TestBlockedWriteAbortedByContext(t *testing.T) {
	release := make(chan struct{})
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		<-release // never reads: the client's writes back up
	})
	defer close(release)
	payload := raw(`"` + strings.Repeat("p", 256<<10) + `"`)
	var err error
	start := time.Now()
	for i := 0; i < 400 && err == nil; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err = c.Send(ctx, "Big", payload)
		cancel()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after %s: err = %v, want deadline exceeded", time.Since(start), err)
	}
	localtest.WaitDone(t, c, 2*time.Second)
	if !errors.Is(c.Err(), errWriteAborted) {
		t.Errorf("Err() = %v", c.Err())
	}
}

func TestWaitingWriterGivesUpOnContext(t *testing.T) {
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) { drainUntilClosed(ws) })
	if err := c.state.AcquireWrite(context.Background()); err != nil { // another writer holds the turn
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := c.Send(ctx, "x")
	c.state.ReleaseWrite()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	if c.Err() != nil {
		t.Errorf("waiting for the turn failed the connection: %v", c.Err())
	}
}

func TestCompressionOnlyWhenAsked(t *testing.T) {
	for _, enable := range []bool{false, true} {
		h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
			if acceptHandshake(t, ws) {
				drainUntilClosed(ws)
			}
		})
		c, err := dialRaw(t, h, func(o *Options) { o.EnableCompression = enable })
		if err != nil {
			t.Fatal(err)
		}
		ext := (<-h.requests).Header.Get("Sec-WebSocket-Extensions")
		if strings.Contains(ext, "permessage-deflate") != enable {
			t.Errorf("EnableCompression=%v: extensions %q", enable, ext)
		}
		c.Close(context.Background())
	}
}

func TestObserverCountsFramePayloads(t *testing.T) {
	obs := &recordingObserver{}
	serverFrames := []string{"{\"type\":6}\x1e", "{\"type\":1,\"target\":\"a\",\"arguments\":[]}\x1e{\"type\":6}\x1e"}
	done := make(chan struct{})
	c := scriptedConn(t, func(o *Options) { o.Observer = obs }, func(t testing.TB, ws *websocket.Conn) {
		for _, f := range serverFrames {
			_ = writeText(ws, f)
		}
		_, _, _ = ws.ReadMessage()
		close(done)
		drainUntilClosed(ws)
	})
	if err := c.Send(context.Background(), "Echo", raw(`"hi"`)); err != nil {
		t.Fatal(err)
	}
	<-done
	deadline := time.Now().Add(2 * time.Second)
	for obs.frames.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// Handshake request + the Send; handshake response + two frames.
	wantSent := len("{\"protocol\":\"json\",\"version\":1}\x1e") + len("{\"type\":1,\"target\":\"Echo\",\"arguments\":[\"hi\"]}\x1e")
	wantReceived := len("{}\x1e") + len(serverFrames[0]) + len(serverFrames[1])
	if obs.sent.Load() != int64(wantSent) || obs.received.Load() != int64(wantReceived) || obs.frames.Load() != 3 {
		t.Errorf("sent %d (want %d), received %d in %d frames (want %d in 3)",
			obs.sent.Load(), wantSent, obs.received.Load(), obs.frames.Load(), wantReceived)
	}
}

func TestNoGoroutineLeakAfterFailures(t *testing.T) {
	baseline := runtime.NumGoroutine()
	for _, script := range []string{"{\"type\":7,\"error\":\"bye\"}\x1e", "garbage\x1e"} {
		h := newRawHub(t, func(t testing.TB, ws *websocket.Conn) {
			if acceptHandshake(t, ws) {
				_ = writeText(ws, script)
				drainUntilClosed(ws)
			}
		})
		c, err := dialRaw(t, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Stream(context.Background(), "S", nil)
		if err != nil && !errors.Is(err, clientconn.ErrClosed) {
			t.Fatal(err)
		}
		localtest.WaitDone(t, c, 3*time.Second)
		if s != nil {
			for range s.Items() {
			}
			if !errors.Is(s.Err(), clientconn.ErrClosed) {
				t.Errorf("stream Err() = %v", s.Err())
			}
		}
		h.srv.Close()
		h.finished.Wait()
	}
	localtest.CheckNoLeak(t, baseline)
}

func TestCloseUnblocksStuckWriter(t *testing.T) {
	t.Parallel() // slow by design; runs after the goroutine-counting tests
	release := make(chan struct{})
	defer close(release)
	c := scriptedConn(t, nil, func(t testing.TB, ws *websocket.Conn) {
		<-release // never reads
	})
	payload := raw(`"` + strings.Repeat("p", 256<<10) + `"`)
	sendErr := make(chan error, 1)
	go func() {
		for {
			// No deadline: only Close can get this writer out.
			if err := c.Send(context.Background(), "Big", payload); err != nil {
				sendErr <- err
				return
			}
		}
	}()
	// Wait until the writer is stuck: its turn stays taken.
	for stuck := 0; stuck < 5; {
		if writeTurnFree(c) {
			stuck = 0
		} else {
			stuck++
		}
		time.Sleep(20 * time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung behind a stuck writer")
	}
	select {
	case err := <-sendErr:
		if !errors.Is(err, clientconn.ErrClosed) {
			t.Errorf("stuck Send returned %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("stuck Send never returned")
	}
}

func TestTransportPhaseHonoursContext(t *testing.T) {
	// A TCP server that accepts and never answers the upgrade.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close() //nolint:gocritic // each accepted connection stays open until the listener closes
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err = Dial(ctx, Options{URL: "ws://" + l.Addr().String() + "/hub", SkipNegotiation: true})
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout {
		t.Fatalf("err = %v, want a timeout clientconn.ConnectError", err)
	}
}

func TestTLSEndToEnd(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hub/negotiate", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"negotiateVersion":1,"connectionId":"c","connectionToken":"t","availableTransports":[{"transport":"WebSockets","transferFormats":["Text"]}]}`))
	})
	mux.HandleFunc("/hub", func(w http.ResponseWriter, r *http.Request) {
		ws, err := testUpgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		if r.URL.Query().Get("id") == "t" && acceptHandshake(t, ws) {
			drainUntilClosed(ws)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// HTTP/2 on, as on Azure SignalR Service and most TLS front ends: the
	// negotiate may use it, the WebSocket upgrade must not be offered it.
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: mux}, EnableHTTP2: true}
	srv.StartTLS()
	defer srv.Close()
	// The WebSocket dial must trust the test CA through HTTPClient.
	c, err := Dial(testCtx(t, 5*time.Second), Options{URL: srv.URL + "/hub", Settings: clientconn.Settings{HTTPClient: srv.Client()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(testCtx(t, 5*time.Second)); err != nil {
		t.Error(err)
	}
}

// TestSlowStreamReaderIsNotServerSilence: a big frame of stream items
// waits on a slow reader of Items; that wait must not count against
// ServerTimeout.
func TestSlowStreamReaderIsNotServerSilence(t *testing.T) {
	t.Parallel() // slow by design; runs after the goroutine-counting tests
	const items = 200
	stop := make(chan struct{})
	defer close(stop)
	c := scriptedConn(t, func(o *Options) { o.ServerTimeout = 300 * time.Millisecond }, func(t testing.TB, ws *websocket.Conn) {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		m, _ := readMessage(data)
		var b strings.Builder
		item := `"` + strings.Repeat("i", 1024) + `"`
		for range items {
			b.WriteString("{\"type\":2,\"invocationId\":\"" + m.InvocationID + "\",\"item\":" + item + "}\x1e")
		}
		b.WriteString("{\"type\":3,\"invocationId\":\"" + m.InvocationID + "\"}\x1e")
		if writeText(ws, b.String()) != nil {
			return
		}
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if writeText(ws, "{\"type\":6}\x1e") != nil {
					return
				}
			}
		}
	})
	s, err := c.Stream(testCtx(t, 5*time.Second), "Big", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-s.Items()
	time.Sleep(700 * time.Millisecond)
	n := 1
	for range s.Items() {
		n++
	}
	if n != items || s.Err() != nil || c.Err() != nil {
		t.Errorf("%d items, stream err %v, connection err %v", n, s.Err(), c.Err())
	}
}

// Handlers read arguments where they lie in the read buffer, so a result
// or stream item handed to another goroutine must be copied out of it
// first: here the next frame, read into the same buffer, would overwrite
// them.
func TestResultsAndItemsOutliveTheReadBuffer(t *testing.T) {
	value := `"` + strings.Repeat("a", 64) + `"`
	item := `"` + strings.Repeat("c", 64) + `"`
	after := "{\"type\":1,\"target\":\"T\",\"arguments\":[\"" + strings.Repeat("b", 80) + "\"]}\x1e"
	handled := make(chan struct{}, 2)
	c := scriptedConn(t, func(o *Options) {
		o.Handlers = map[string]Handler{"T": func([]json.RawMessage) { handled <- struct{}{} }}
	}, func(t testing.TB, ws *websocket.Conn) {
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			m, _ := readMessage(data)
			switch m.Target {
			case "Value":
				_ = writeText(ws, "{\"type\":3,\"invocationId\":\""+m.InvocationID+"\",\"result\":"+value+"}\x1e")
			case "Items":
				_ = writeText(ws, "{\"type\":2,\"invocationId\":\""+m.InvocationID+"\",\"item\":"+item+"}\x1e")
			}
			_ = writeText(ws, after)
		}
	})
	ctx := testCtx(t, 5*time.Second)
	r, err := c.Invoke(ctx, "Value")
	if err != nil {
		t.Fatal(err)
	}
	<-handled
	if string(r) != value {
		t.Errorf("result %s after the next frame, want %s", r, value)
	}
	s, err := c.Stream(ctx, "Items", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-handled
	if got := <-s.Items(); string(got) != item {
		t.Errorf("item %s after the next frame, want %s", got, item)
	}
}
