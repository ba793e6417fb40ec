package scenarios_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/internal/localtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// wpsScript is how the scripted Web PubSub service misbehaves. Healthy,
// it connects every client and answers every event with its data as a
// server message, as a service with an echoing event handler does.
type wpsScript struct {
	// after is how many events of each connection are answered before
	// frames are sent instead of the next answer.
	after  int
	frames []string // text frames; "\x00binary" makes a binary frame
	// deaf: instead of frames, the service stops reading and writing but
	// keeps the socket open (half-open) until the test ends.
	deaf bool
	// upgradeStatus, when set, refuses every upgrade with upgradeBody.
	upgradeStatus int
	upgradeBody   string
	// restStatus, when set, answers every REST call with restBody.
	restStatus int
	restBody   string
}

// wpsService is a Web PubSub service on 127.0.0.1 that plays a wpsScript.
type wpsService struct {
	script   wpsScript
	upgrader websocket.Upgrader
	wg       sync.WaitGroup
	ids      atomic.Int64
	struck   atomic.Int64  // connections that got the script's frames or went deaf
	quit     chan struct{} // closed when the test ends: deaf connections go
	rest     atomic.Int64  // REST calls answered
	url      string
}

func startWPSService(t *testing.T, script wpsScript) *wpsService {
	t.Helper()
	s := &wpsService{script: script, quit: make(chan struct{}), upgrader: websocket.Upgrader{
		Subprotocols: []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable},
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /client/hubs/{hub}", s.connect)
	mux.HandleFunc("/api/", s.restCall)
	srv := localtest.Server(t, mux)
	t.Cleanup(s.wg.Wait) // runs after srv.Close: every socket is gone
	t.Cleanup(func() { close(s.quit) })
	s.url = srv.URL
	return s
}

// endpoint reaches the service as a Web PubSub target.
func (s *wpsService) endpoint(t *testing.T) scenarios.Endpoint {
	cs, err := azure.ParseConnectionString("Endpoint=" + s.url + ";AccessKey=" + matrixKey + ";Version=1.0;")
	if err != nil {
		t.Fatal(err)
	}
	return scenariostest.WebPubSub(cs, wpsHub)
}

func (s *wpsService) restCall(w http.ResponseWriter, r *http.Request) {
	s.rest.Add(1)
	if s.script.restStatus != 0 {
		http.Error(w, s.script.restBody, s.script.restStatus)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (s *wpsService) connect(w http.ResponseWriter, r *http.Request) {
	if s.script.upgradeStatus != 0 {
		http.Error(w, s.script.upgradeBody, s.script.upgradeStatus)
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	defer ws.Close()
	id := "conn-" + strconv.FormatInt(s.ids.Add(1), 10)
	if s.send(ws, &webpubsub.Frame{Kind: webpubsub.KindConnected, ConnectionID: id}) != nil {
		return
	}
	s.serve(ws)
}

// serve answers events until the client goes; after script.after of
// them it sends the script's frames once and answers no more.
func (s *wpsService) serve(ws *websocket.Conn) {
	var dec webpubsub.Decoder
	var f webpubsub.Frame
	answered, struck := 0, false
	for {
		_, data, err := ws.ReadMessage()
		if err != nil || dec.Decode(data, &f) != nil {
			return
		}
		switch {
		case f.Kind != webpubsub.KindEvent || struck:
			continue
		case s.script.deaf && answered == s.script.after:
			s.struck.Add(1)
			<-s.quit
			return
		case len(s.script.frames) > 0 && answered == s.script.after:
			struck = true
			s.strike(ws)
			continue
		}
		answered++
		answer := webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: f.DataType, Data: f.Data}
		if s.send(ws, &answer) != nil {
			return
		}
	}
}

// strike sends the script's frames.
func (s *wpsService) strike(ws *websocket.Conn) {
	s.struck.Add(1)
	for _, frame := range s.script.frames {
		kind := websocket.TextMessage
		if b, ok := strings.CutPrefix(frame, "\x00"); ok {
			kind, frame = websocket.BinaryMessage, b
		}
		_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
		_ = ws.WriteMessage(kind, []byte(frame))
	}
}

func (s *wpsService) send(ws *websocket.Conn, f *webpubsub.Frame) error {
	b, err := webpubsub.AppendFrame(nil, f)
	if err != nil {
		return err
	}
	_ = ws.SetWriteDeadline(time.Now().Add(time.Second))
	return ws.WriteMessage(websocket.TextMessage, b)
}
