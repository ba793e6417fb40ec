package scenarios

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/wire"
	"github.com/hubprobe/hubprobe/scenarios/wire/classicwire"
	"github.com/hubprobe/hubprobe/scenarios/wire/corewire"
)

// echoPathWindow bounds the messages in flight, as a paced sender would.
const echoPathWindow = 64

// BenchmarkEchoPath measures the probe's side of one echo message on the
// Core and the classic wire: the kind's send (payload, invocation, the
// WebSocket write) and the delivery (frame decode, dispatch to the
// handler, the latency record). The hub is a loopback reflector that
// splices each Echo's arguments into the hub's answer (on the classic wire
// after the invocation's result, as the hub sends), so next to none of
// the cost is a hub's; messages are pipelined, so ns/op is throughput, not
// round trip. allocs/op and B/op count the whole process, reflector
// included (which allocates nothing per message). Compare the wires with
//
//	go test -run '^$' -bench EchoPath -benchmem ./scenarios/
func BenchmarkEchoPath(b *testing.B) {
	b.Run("core", func(b *testing.B) {
		benchEchoPath(b, reflector{answer: coreAnswer}, func(url string) wire.Wire {
			return corewire.New(corewire.Target{URL: url + "/hub", SkipNegotiation: true})
		})
	})
	b.Run("classic", func(b *testing.B) {
		rf := reflector{greeting: `{"C":"0","S":1,"M":[]}`, result: classicResult, answer: classicAnswer}
		benchEchoPath(b, rf, func(url string) wire.Wire {
			return classicwire.New(classicwire.Target{URL: url + "/signalr", Hub: "Signalrbench"})
		})
	})
}

func benchEchoPath(b *testing.B, rf reflector, wireTo func(url string) wire.Wire) {
	srv := httptest.NewServer(rf)
	b.Cleanup(srv.Close)
	rec := &deliverySink{got: make(chan struct{}, echoPathWindow), window: make(chan struct{}, echoPathWindow)}
	cfg := config.DefaultScenario
	cfg.Name, cfg.Kind, cfg.Connections = "echopath", "echo", 1
	rn := &Runner{Scenario: cfg, Endpoint: Endpoint{Wire: wireTo(srv.URL)}, Recorder: rec}
	run := rn.newRun(cfg, rec, time.Now())
	c := dialOne(b, run)
	defer func() { _ = c.Conn.Close(context.Background()) }()
	run.Clients, run.routes, run.kind = []*Client{c}, make([]route, 1), newEcho(cfg)
	if err := run.kind.Prepare(context.Background(), run); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	sent := make(chan error, 1)
	go func() { sent <- sendPipelined(b.N, run, rec) }()
	for range b.N {
		<-rec.got
		<-rec.window
	}
	if err := <-sent; err != nil {
		b.Fatal(err)
	}
}

func dialOne(b *testing.B, run *Run) *Client {
	var err error
	run.dialer, err = run.rn.Endpoint.Wire.Open(wire.Run{Scenario: run.Config, WriteTimeout: run.rn.stallWait(), RESTObserver: restObserver(run.tracker)})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := run.connect(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// sendPipelined sends n echoes, at most echoPathWindow ahead of their
// deliveries, under a context that can end, as a run's sends are.
func sendPipelined(n int, run *Run, rec *deliverySink) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf []byte
	for range n {
		rec.window <- struct{}{}
		if err := run.sendOne(ctx, 0, 0, &buf); err != nil {
			return err
		}
	}
	return nil
}

// reflector is a loopback hub for one WebSocket connection on either wire:
// it writes greeting when the socket opens and, for each client message,
// the result (when the wire has one) and the answer, each one WebSocket
// message. It also answers the classic negotiate, start, ping and abort
// requests.
type reflector struct {
	greeting string
	result   func(dst, msg []byte) []byte
	answer   func(dst, msg []byte, n uint64) []byte
}

func (rf reflector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch path.Base(r.URL.Path) {
	case "negotiate":
		_, _ = io.WriteString(w, `{"Url":"/signalr","ConnectionToken":"tok-1","ConnectionId":"id-1","KeepAliveTimeout":20.0,`+
			`"DisconnectTimeout":30.0,"ConnectionTimeout":110.0,"TryWebSockets":true,"ProtocolVersion":"2.0","TransportConnectTimeout":5.0,"LongPollDelay":0.0}`)
	case "start":
		_, _ = io.WriteString(w, aspnet.StartResponse)
	case "ping":
		_, _ = io.WriteString(w, aspnet.PingResponse)
	case "abort":
	default:
		rf.reflect(w, r)
	}
}

func (rf reflector) reflect(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{ReadBufferSize: clientconn.WebSocketBufferSize, WriteBufferSize: clientconn.WebSocketBufferSize}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	if rf.greeting != "" && ws.WriteMessage(websocket.TextMessage, []byte(rf.greeting)) != nil {
		return
	}
	var in bytes.Buffer
	var out []byte
	for n := uint64(1); ; n++ {
		_, rd, err := ws.NextReader()
		if err != nil {
			return
		}
		in.Reset()
		if _, err := in.ReadFrom(rd); err != nil {
			return
		}
		if rf.result != nil && ws.WriteMessage(websocket.TextMessage, rf.result(out[:0], in.Bytes())) != nil {
			return
		}
		out = rf.answer(out[:0], in.Bytes(), n)
		if len(out) > 0 && ws.WriteMessage(websocket.TextMessage, out) != nil {
			return
		}
	}
}

// coreAnswer accepts the handshake and answers Echo(p) with
// RecordLatency(p), as the Core benchmark hub does.
func coreAnswer(dst, msg []byte, _ uint64) []byte {
	if bytes.HasPrefix(msg, []byte(`{"protocol"`)) {
		return append(dst, "{}\x1e"...)
	}
	i := bytes.Index(msg, []byte(`"arguments":`))
	if i < 0 {
		return dst
	}
	dst = append(dst, `{"type":1,"target":"RecordLatency",`...)
	return append(dst, msg[i:]...)
}

// classicResult is the classic hub's answer to every invocation, void
// methods' too: {"I":"id"}.
func classicResult(dst, msg []byte) []byte {
	i := bytes.LastIndex(msg, []byte(`,"I":`))
	if i < 0 {
		return append(dst, `{"I":"0"}`...)
	}
	dst = append(dst, `{"I":"`...)
	dst = append(dst, bytes.TrimSuffix(msg[i+len(`,"I":`):], []byte("}"))...)
	return append(dst, `"}`...)
}

// classicAnswer answers Echo(ticks, payload) with Measure(ticks, payload)
// in an envelope whose cursor moves on with every message, as the classic
// Signalrbench hub does.
func classicAnswer(dst, msg []byte, n uint64) []byte {
	a := bytes.Index(msg, []byte(`"A":`))
	end := bytes.LastIndex(msg, []byte(`,"I":`))
	if a < 0 || end < a {
		return dst
	}
	dst = append(dst, `{"C":"`...)
	dst = strconv.AppendUint(dst, n, 10)
	dst = append(dst, `","M":[{"H":"Signalrbench","M":"Measure",`...)
	dst = append(dst, msg[a:end]...)
	return append(dst, "}]}"...)
}

// deliverySink is a Recorder that tells the benchmark of each delivery.
type deliverySink struct {
	clientconn.NopObserver
	got    chan struct{}
	window chan struct{}
}

func (s *deliverySink) Delivered(Delivery) { s.got <- struct{}{} }
func (*deliverySink) Sent(time.Duration)   {}
func (*deliverySink) Event(Event)          {}
