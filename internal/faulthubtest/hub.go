package faulthubtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// recordSeparator ends every JSON hub protocol record.
const recordSeparator = 0x1e

// writeTimeout bounds every write, so a client that stopped reading cannot
// hold a handler (and with it Close) for long.
const writeTimeout = 5 * time.Second

var upgrader = websocket.Upgrader{
	ReadBufferSize:  4096,
	WriteBufferSize: 4096,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// upgrade opens the WebSocket, unless the script refuses it, and plays the
// hub's part on it until the client or the script ends it.
func (s *Server) upgrade(w http.ResponseWriter, r *http.Request) {
	if s.script.Fault == UpgradeRefused {
		http.Error(w, http.StatusText(s.script.Status), s.script.Status)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	raw := ws.UnderlyingConn()
	if !s.track(raw) {
		return
	}
	defer s.untrack(raw)
	s.upgrades.Add(1)
	c := &hubConn{s: s, ws: ws, id: r.URL.Query().Get("id"), stop: make(chan struct{})}
	defer close(c.stop)
	if c.handshake() {
		c.serve()
	}
}

// hubConn is the server's side of one connection.
type hubConn struct {
	s        *Server
	ws       *websocket.Conn
	id       string
	answered int  // echoes answered so far
	struck   bool // the mid-run fault happened; later echoes go unanswered
	stop     chan struct{}
	writeMu  sync.Mutex
	pending  chan delayedEcho  // Slow only
	held     []json.RawMessage // Reorder only: the answer held back
}

type delayedEcho struct {
	due  time.Time
	args []json.RawMessage
}

// handshake reads the client's handshake request and answers it as the
// script says; it reports whether the connection goes on.
func (c *hubConn) handshake() bool {
	if _, _, err := c.ws.ReadMessage(); err != nil {
		return false
	}
	c.s.handshakes.Add(1)
	switch c.s.script.Fault {
	case HandshakeSilent:
		c.discardUntilGone()
		return false
	case HandshakeError:
		msg, _ := json.Marshal(c.s.script.Message)
		_ = c.writeText(`{"error":` + string(msg) + "}\x1e")
		return false
	}
	if c.writeText("{}\x1e") != nil {
		return false
	}
	id, _ := json.Marshal(c.id)
	return c.writeText(`{"type":1,"target":"OnConnected","arguments":[`+string(id)+"]}\x1e") == nil
}

// serve reads the client's records and answers each Echo, until the
// client goes or a fault ends the conversation.
func (c *hubConn) serve() {
	if c.s.script.Fault == Slow {
		c.startDelayedWriter()
	}
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		for _, record := range bytes.Split(data, []byte{recordSeparator}) {
			if !c.onRecord(record) {
				return
			}
		}
	}
}

// onRecord handles one record and reports whether to keep serving. Only
// Echo needs an answer; pings, the Close message and anything else are read
// and ignored (the close frame that follows a Close ends the loop).
func (c *hubConn) onRecord(record []byte) bool {
	var m struct {
		Type      int               `json:"type"`
		Target    string            `json:"target"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if len(record) == 0 || json.Unmarshal(record, &m) != nil {
		return true
	}
	if m.Type == 7 {
		c.s.closes.Add(1)
	}
	if m.Type != 1 || m.Target != "Echo" {
		return true
	}
	c.s.echoes.Add(1)
	return c.onEcho(m.Arguments)
}

func (c *hubConn) onEcho(args []json.RawMessage) bool {
	sc := c.s.script
	switch sc.Fault {
	case Mute:
		return true
	case Reorder:
		return c.reorder(args)
	case Slow:
		select {
		case c.pending <- delayedEcho{due: time.Now().Add(sc.Delay), args: args}:
		case <-c.stop:
		}
		return true
	case CloseMessage, AbruptClose, HalfOpen, Frames:
		if c.struck {
			return true
		}
		if c.answered >= sc.After {
			c.struck = true
			c.s.struck.Add(1)
			return c.strike()
		}
	}
	c.answered++
	return c.recordLatency(args) == nil
}

// reorder answers echoes with every Script.After-th answer held back until
// right after the next one, so it arrives behind a later message.
func (c *hubConn) reorder(args []json.RawMessage) bool {
	c.answered++
	if held := c.held; held != nil {
		c.held = nil
		return c.recordLatency(args) == nil && c.recordLatency(held) == nil
	}
	if (c.answered-1)%max(c.s.script.After, 1) == 0 {
		c.held = args
		return true
	}
	return c.recordLatency(args) == nil
}

// strike plays a mid-run fault and reports whether to keep reading.
func (c *hubConn) strike() bool {
	switch c.s.script.Fault {
	case CloseMessage:
		msg, _ := json.Marshal(c.s.script.Message)
		_ = c.writeText(`{"type":7,"error":` + string(msg) + "}\x1e")
		c.writeMu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseInternalServerErr, ""), time.Now().Add(writeTimeout))
		c.writeMu.Unlock()
		return false
	case AbruptClose:
		_ = c.ws.UnderlyingConn().Close()
		return false
	case HalfOpen:
		// Neither read nor write: the socket stays open and says nothing.
		<-c.s.done
		return false
	case Frames:
		for _, f := range c.s.script.Frames {
			if c.write(f) != nil {
				return false
			}
		}
	}
	return true
}

// recordLatency answers an Echo the way the benchmark hub does.
func (c *hubConn) recordLatency(args []json.RawMessage) error {
	payload := json.RawMessage("null")
	if len(args) > 0 {
		payload = args[0]
	}
	return c.writeText(`{"type":1,"target":"RecordLatency","arguments":[` + string(payload) + "]}\x1e")
}

// startDelayedWriter answers echoes once they are due, on a goroutine of
// its own so reading (and answering pings) goes on meanwhile.
func (c *hubConn) startDelayedWriter() {
	c.pending = make(chan delayedEcho, 4096)
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		timer := time.NewTimer(0)
		defer timer.Stop()
		<-timer.C
		for {
			var e delayedEcho
			select {
			case e = <-c.pending:
			case <-c.stop:
				return
			}
			timer.Reset(time.Until(e.due))
			select {
			case <-timer.C:
			case <-c.stop:
				return
			}
			if c.recordLatency(e.args) != nil {
				return
			}
		}
	}()
}

// discardUntilGone reads and drops everything until the client goes.
func (c *hubConn) discardUntilGone() {
	for {
		if _, _, err := c.ws.ReadMessage(); err != nil {
			return
		}
	}
}

func (c *hubConn) writeText(s string) error {
	return c.write(Frame{Data: []byte(s)})
}

func (c *hubConn) write(f Frame) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.ws.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return err
	}
	typ := websocket.TextMessage
	if f.Binary {
		typ = websocket.BinaryMessage
	}
	return c.ws.WriteMessage(typ, f.Data)
}

// Repeat returns n frames of size bytes of filler text, none of which holds
// a record separator: a record that never ends.
func Repeat(n, size int) []Frame {
	data := bytes.Repeat([]byte("a"), size)
	frames := make([]Frame, n)
	for i := range frames {
		frames[i] = Frame{Data: data}
	}
	return frames
}

// BigRecord returns one frame holding a single valid RecordLatency record of
// at least size bytes.
func BigRecord(size int) Frame {
	filler := bytes.Repeat([]byte("x"), size)
	rec := `{"type":1,"target":"RecordLatency","arguments":["` + string(filler) + `"]}` + "\x1e"
	return Frame{Data: []byte(rec)}
}

// Text returns a text frame of s.
func Text(s string) Frame { return Frame{Data: []byte(s)} }

// Binary returns a binary frame of b.
func Binary(b []byte) Frame { return Frame{Binary: true, Data: b} }

// UnknownType returns a record of a message type SignalR does not define.
func UnknownType(t int) Frame { return Text(`{"type":` + strconv.Itoa(t) + "}\x1e") }
