// Package faulthubtest is a SignalR hub on 127.0.0.1 that misbehaves on
// purpose. Healthy, it speaks just enough of the benchmark hub contract for
// an echo scenario (negotiate, WebSockets, JSON hub protocol, OnConnected,
// Echo → RecordLatency); a Script makes it fail in one chosen way, so tests
// can show what hubprobe reports for each fault a real hub can have.
package faulthubtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is the one way a Server misbehaves.
type Fault int

const (
	// Healthy answers everything as a benchmark hub would.
	Healthy Fault = iota
	// Silent accepts TCP connections and never sends a byte.
	Silent
	// NegotiateStatus answers every negotiate with Script.Status and the
	// next of Script.Bodies.
	NegotiateStatus
	// NegotiateBody answers every negotiate with 200 and the next of
	// Script.Bodies (malformed JSON, missing fields).
	NegotiateBody
	// UpgradeRefused negotiates normally, then answers the WebSocket
	// upgrade with Script.Status.
	UpgradeRefused
	// HandshakeSilent reads the handshake request and never answers it.
	HandshakeSilent
	// HandshakeError refuses the handshake with {"error": Script.Message}.
	HandshakeError
	// CloseMessage sends a Close message carrying Script.Message instead of
	// the echo after Script.After, then closes the socket.
	CloseMessage
	// AbruptClose closes the TCP connection instead of the echo after
	// Script.After, without a Close message or close frame.
	AbruptClose
	// HalfOpen stops reading and writing instead of the echo after
	// Script.After, and keeps the socket open until the server closes.
	HalfOpen
	// Slow answers every echo Script.Delay late.
	Slow
	// Frames sends Script.Frames instead of the echo after Script.After,
	// then keeps reading until the client goes.
	Frames
	// Mute reads every echo and never answers one.
	Mute
	// Reorder holds back each connection's first echo answer and every
	// Script.After-th after it, and sends each held answer right behind
	// the connection's next one.
	Reorder
)

// Frame is one WebSocket data frame the server sends as is.
type Frame struct {
	Binary bool
	Data   []byte
}

// Script says how a Server misbehaves.
type Script struct {
	Fault Fault
	// After is how many echoes each connection gets answered before a
	// mid-run fault (CloseMessage, AbruptClose, HalfOpen, Frames) strikes.
	After int
	// Status is the HTTP status of NegotiateStatus and UpgradeRefused.
	Status int
	// Bodies are negotiate response bodies, used in turn, one per request.
	Bodies []string
	// Message is the error of HandshakeError and CloseMessage.
	Message string
	// Delay is how late Slow answers.
	Delay time.Duration
	// Frames is what Frames sends.
	Frames []Frame
}

// Counts is what a Server saw, so tests can check a fault was exercised.
type Counts struct {
	Negotiations int64 // negotiate requests answered (or held, when Silent: connections)
	Upgrades     int64 // WebSocket upgrades accepted
	Handshakes   int64 // handshake requests read
	Echoes       int64 // Echo invocations read
	Closes       int64 // Close messages read from clients
	Struck       int64 // times a mid-run fault struck
}

// hubPath is where the hub listens; negotiate is below it.
const hubPath = "/hub"

// Server is a running fault server.
type Server struct {
	script   Script
	listener net.Listener
	http     *http.Server
	done     chan struct{}
	closed   sync.Once
	wg       sync.WaitGroup // every goroutine the server started

	mu    sync.Mutex
	conns map[net.Conn]struct{} // raw and hijacked connections, closed on Close

	negotiations, upgrades, handshakes, echoes, struck, closes atomic.Int64
	connIDs                                                    atomic.Int64
}

// Start serves script on a fresh loopback port.
func Start(script Script) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{script: script, listener: l, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	if script.Fault == Silent {
		go s.holdSilently()
		return s, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+hubPath+"/negotiate", s.tracked(s.negotiate))
	mux.HandleFunc("GET "+hubPath, s.tracked(s.upgrade))
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer s.wg.Done()
		_ = s.http.Serve(l)
	}()
	return s, nil
}

// URL is the hub endpoint, http://127.0.0.1:PORT/hub.
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() + hubPath }

// Counts reports what the server saw so far.
func (s *Server) Counts() Counts {
	return Counts{
		Negotiations: s.negotiations.Load(), Upgrades: s.upgrades.Load(),
		Handshakes: s.handshakes.Load(), Echoes: s.echoes.Load(), Struck: s.struck.Load(),
		Closes: s.closes.Load(),
	}
}

// Close stops the server, drops every connection, and returns once every
// goroutine it started has ended.
func (s *Server) Close() {
	s.closed.Do(func() {
		s.mu.Lock()
		close(s.done) // under mu: no handler enters or conn is tracked after this
		s.mu.Unlock()
		if s.http != nil {
			_ = s.http.Close()
		} else {
			_ = s.listener.Close()
		}
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
}

// tracked counts a handler among the server's goroutines: net/http does not
// wait for handlers, and a hijacked connection's handler outlives Close.
func (s *Server) tracked(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.enter() {
			return
		}
		defer s.wg.Done()
		h(w, r)
	}
}

// enter adds a handler to wg unless Close has begun, so no Add can race
// with Close's Wait.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return false
	default:
		s.wg.Add(1)
		return true
	}
}

// track registers c to be closed by Close; it reports false (and closes c)
// when the server is already closing.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		_ = c.Close()
		return false
	default:
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// holdSilently accepts connections and keeps them, unread, until Close.
func (s *Server) holdSilently() {
	defer s.wg.Done()
	for {
		c, err := s.listener.Accept()
		if err != nil {
			return
		}
		if s.track(c) {
			s.negotiations.Add(1)
		}
	}
}

// negotiate answers one negotiate request as the script says.
func (s *Server) negotiate(w http.ResponseWriter, _ *http.Request) {
	n := s.negotiations.Add(1) - 1
	body := fmt.Sprintf(`{"negotiateVersion":1,"connectionId":"c%[1]d","connectionToken":"t%[1]d",`+
		`"availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]}]}`, s.connIDs.Add(1))
	status := http.StatusOK
	switch s.script.Fault {
	case NegotiateStatus:
		status, body = s.script.Status, s.nextBody(n)
	case NegotiateBody:
		body = s.nextBody(n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (s *Server) nextBody(n int64) string {
	if len(s.script.Bodies) == 0 {
		return ""
	}
	return s.script.Bodies[n%int64(len(s.script.Bodies))]
}

// ClosedPortURL returns a hub URL on a loopback port that nothing listens
// on: the port was free a moment ago and is closed again.
func ClosedPortURL() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", errors.Join(errors.New("faulttest: closing probe listener"), err)
	}
	return "http://" + addr + hubPath, nil
}
