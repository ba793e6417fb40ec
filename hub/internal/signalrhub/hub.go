package signalrhub

import (
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
)

// Defaults match ASP.NET Core SignalR's HubOptions and LongPollingOptions
// where ASP.NET has one.
const (
	DefaultPath             = "/signalrbench"
	DefaultMaxMessageSize   = 32 * 1024
	DefaultHandshakeTimeout = 15 * time.Second
	DefaultPollTimeout      = 90 * time.Second
)

// negotiateTTL bounds how long a negotiated connection may wait for its
// transport before its token is forgotten.
const negotiateTTL = 15 * time.Second

// Config is the SignalR side's own settings; zero fields take the defaults
// above. The hub package documents each field (hub.Options).
type Config struct {
	Path              string // without a trailing slash
	MaxMessageSize    int64
	HandshakeTimeout  time.Duration
	PollTimeout       time.Duration
	RedirectNegotiate bool
}

func (c Config) withDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.PollTimeout == 0 {
		c.PollTimeout = DefaultPollTimeout
	}
	return c
}

// space is one hub name's SignalR connections.
type space = core.Space[*conn]

// Hub is the SignalR side of the reference hub, on a host it shares with
// the other protocols: the app path's negotiate and transports, and with
// the Azure emulation the client endpoints and the REST API of Azure
// SignalR Service.
type Hub struct {
	*core.Host
	cfg          Config
	upgrader     *websocket.Upgrader
	tokens       *core.Tokens[identity, *conn]
	delayed      *core.DelayQueue[delivery]
	spaces       *core.Spaces[*conn]
	lifetime     *core.Lifetime[*conn]
	pings        [numCodecs]*frame // a Ping in each hub protocol
	home         *space            // the hub name the app path serves
	negotiateTTL time.Duration     // negotiateTTL; shorter in tests
	beating      []*conn           // the heartbeat's, reused between beats
}

// New builds the SignalR side on host. Its slow-mode queue runs on a
// goroutine of the host's.
func New(host *core.Host, cfg Config) *Hub {
	h := &Hub{
		Host:         host,
		cfg:          cfg.withDefaults(),
		upgrader:     transport.NewUpgrader(),
		tokens:       core.NewTokens[identity, *conn](host),
		spaces:       core.NewSpaces[*conn](host),
		lifetime:     core.NewLifetime[*conn](host),
		negotiateTTL: negotiateTTL,
	}
	for _, cd := range codecs {
		ping, _ := cd.AppendMessage(nil, &signalr.Message{Type: signalr.PingType})
		h.pings[cd.index] = staticFrame(ping)
	}
	h.home, _ = h.spaces.Named(HubName(h.cfg.Path))
	h.delayed = core.NewDelayQueue(host, func(d *delivery) { h.send(d, false) })
	return h
}

// HubName is the name the app path's connections have on the Azure
// endpoints: the path's last segment, lower-cased.
func HubName(path string) string {
	return strings.ToLower(path[strings.LastIndexByte(path, '/')+1:])
}

// ServeHTTP serves negotiate and the transports at the app path and, with
// the Azure emulation, Azure SignalR Service's client endpoints and REST
// API; any other path is 404.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == h.cfg.Path || p == h.cfg.Path+"/":
		h.serveConnection(w, r, identity{space: h.home})
	case p == h.cfg.Path+"/negotiate":
		h.serveAppNegotiate(w, r)
	case h.EmulatesAzure() && (p == "/client" || p == "/client/"):
		h.serveClient(w, r, false)
	case h.EmulatesAzure() && p == "/client/negotiate":
		h.serveClient(w, r, true)
	case h.EmulatesAzure() && strings.HasPrefix(p, "/api/"):
		h.serveREST(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Hub) serveAppNegotiate(w http.ResponseWriter, r *http.Request) {
	if h.cfg.RedirectNegotiate {
		h.serveRedirect(w, r)
		return
	}
	h.serveNegotiate(w, r, identity{space: h.home})
}

// register makes a connection addressable once its handshake is done.
func (h *Hub) register(c *conn) bool {
	return h.lifetime.Register(c, c.space, c.id, c.user, &c.groups, nil)
}

func (h *Hub) untrack(c *conn) { h.lifetime.Untrack(c, c.space, c.id, c.user, c.groups) }

func (h *Hub) addToGroup(c *conn, group string) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	c.space.Join(c, c.id, group, &c.groups)
}

func (h *Hub) removeFromGroup(c *conn, group string) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	c.space.Leave(c, group, c.groups)
}

// CloseAll sends Close to every client; each connection then ends.
func (h *Hub) CloseAll() {
	for _, c := range h.lifetime.Open() {
		c.requestClose(&signalr.Message{Type: signalr.CloseType})
	}
}

// Drop ends up to n open connections (every one when n <= 0) as how
// says, and returns how many it ended.
func (h *Hub) Drop(how core.Drill, n int) int {
	return h.lifetime.Drop(n, func(c *conn) bool { return !c.closed.Load() }, func(c *conn) { c.drop(how) })
}

// drop ends c as how says.
func (c *conn) drop(how core.Drill) {
	switch how {
	case core.DrillCloseError:
		c.requestClose(closeWithError(core.DrillText))
	case core.DrillCloseReconnect:
		c.requestClose(&signalr.Message{Type: signalr.CloseType, Error: core.DrillText, HasError: true, AllowReconnect: true})
	case core.DrillDisconnect:
		c.requestClose(&signalr.Message{Type: signalr.CloseType})
	case core.DrillAbort, core.DrillRestart:
		c.requestClose(nil)
		c.t.Abort()
	}
}

// recovered accounts for a panic on a connection's goroutine and closes it.
func (h *Hub) recovered(c *conn, r any) {
	h.NotePanic(c.log, r)
	c.requestClose(closeWithError(errMsgGeneric))
}
