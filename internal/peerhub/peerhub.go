// Package peerhub is the third-party benchmark hub: the vendor benchmark
// hub's contract hosted on github.com/philippseith/signalr, a SignalR
// server hubprobe did not write, with faults to rehearse, so tests (see
// peerhubtest) and loadbench's peer measurements hold hubprobe's client and
// scenarios against an implementation of others.
package peerhub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/philippseith/signalr"
)

// Hub is the benchmark hub: the same methods and callbacks as the vendor's
// BenchHub. The ConnectionId() method is left out: the library resolves that
// name to a built-in of its own.
type Hub struct {
	signalr.Hub
	server *Server
}

// OnConnected tells the client its id, as the benchmark hub does.
func (h *Hub) OnConnected(id string) {
	h.server.fanout.connected(id)
	h.Clients().Client(id).Send("OnConnected", id)
}

// Echo answers the caller with p, unless the server's faults say otherwise.
func (h *Hub) Echo(p map[string]any) {
	s := h.server
	if s.DropEcho.Load() {
		return
	}
	if d := time.Duration(s.EchoDelay.Load()); d > 0 {
		time.Sleep(d)
	}
	fault := EchoAnswer
	if plan := s.echoPlan.Load(); plan != nil {
		fault = (*plan)(s.echoes.Add(1) - 1)
	}
	caller := h.Clients().Caller()
	switch fault {
	case EchoDrop:
		return
	case EchoClose:
		_ = h.Close(CloseText, false)
		return
	case EchoTwice:
		caller.Send("RecordLatency", p)
	}
	caller.Send("RecordLatency", p)
}

// EchoFault is what the hub does with one Echo, to rehearse a hub that
// misdelivers.
type EchoFault int

// The faults an Echo can meet.
const (
	EchoAnswer EchoFault = iota // answer once
	EchoDrop                    // answer nothing
	EchoTwice                   // answer twice
	EchoClose                   // close the caller's connection with CloseText
)

// CloseText is the error of the Close an EchoClose sends.
const CloseText = "benchtest: closed on purpose"

// SetEchoPlan makes plan decide every Echo, by its number across the
// server, from 0.
func (s *Server) SetEchoPlan(plan func(n int64) EchoFault) { s.echoPlan.Store(&plan) }

// Broadcast sends p to every connection, but for the deliveries the
// server's drop plan drops.
func (h *Hub) Broadcast(p map[string]any) { h.broadcast(p) }

// SendToClient sends p to the connection it names.
func (h *Hub) SendToClient(p map[string]any) {
	id, _ := p["information.ConnectionId"].(string)
	h.Clients().Client(id).Send("RecordLatency", p)
}

// SendToGroup sends p to every member of the group it names.
func (h *Hub) SendToGroup(p map[string]any) {
	group, _ := p["information.GroupName"].(string)
	h.Clients().Group(group).Send("RecordLatency", p)
}

// JoinGroup adds the caller to group and acknowledges it.
func (h *Hub) JoinGroup(group string) {
	h.Groups().AddToGroup(group, h.ConnectionID())
	h.Clients().Caller().Send("JoinGroup")
}

// LeaveGroup removes the caller from group and acknowledges it.
func (h *Hub) LeaveGroup(group string) {
	h.Groups().RemoveFromGroup(group, h.ConnectionID())
	h.Clients().Caller().Send("LeaveGroup")
}

// GetConnectionId returns the caller's connection id; the benchmark hub
// contract spells the method so.
func (h *Hub) GetConnectionId() string { return h.ConnectionID() }

// StreamingEcho streams every uploaded item back, each after delay
// milliseconds, as the benchmark hub does.
func (h *Hub) StreamingEcho(upload <-chan map[string]any, delay int) <-chan map[string]any {
	out := make(chan map[string]any)
	ctx := h.Context()
	go func() {
		defer close(out)
		for item := range upload {
			if delay > 0 {
				time.Sleep(time.Duration(delay) * time.Millisecond)
			}
			select {
			case out <- item:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// Server is a running third-party benchmark hub.
type Server struct {
	URL       string // http://127.0.0.1:PORT/signalrbench
	EchoDelay atomic.Int64
	// DropEcho makes Echo answer nothing, to rehearse lost messages.
	DropEcho atomic.Bool
	http     *httptest.Server
	cancel   context.CancelFunc

	echoPlan atomic.Pointer[func(int64) EchoFault]
	echoes   atomic.Int64
	fanout   fanout
}

// Start serves the benchmark hub at /signalrbench on a loopback port.
// options, the library's server options, apply after the defaults (a 2 s
// keep-alive, a 30 s timeout, no logs), so they may override them.
func Start(options ...func(signalr.Party) error) (*Server, error) {
	s := &Server{}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := signalr.NewServer(ctx, append([]func(signalr.Party) error{
		signalr.HubFactory(func() signalr.HubInterface { return &Hub{server: s} }),
		signalr.InsecureSkipVerify(true),
		signalr.KeepAliveInterval(2 * time.Second),
		signalr.TimeoutInterval(30 * time.Second),
		signalr.Logger(quiet{}, false),
	}, options...)...)
	if err != nil {
		cancel()
		return nil, err
	}
	mux := http.NewServeMux()
	srv.MapHTTP(signalr.WithHTTPServeMux(mux), "/signalrbench")
	s.http = httptest.NewServer(mux)
	s.URL = s.http.URL + "/signalrbench"
	s.cancel = cancel
	return s, nil
}

// Close stops the server and its connections.
func (s *Server) Close() {
	s.cancel()
	s.http.CloseClientConnections()
	s.http.Close()
}

// quiet drops the library's logs, which would otherwise flood test output.
type quiet struct{}

func (quiet) Log(...any) error { return nil }
