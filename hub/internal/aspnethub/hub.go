package aspnethub

import (
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// Defaults, as ASP.NET SignalR 2's configuration has them.
const (
	DefaultPath              = "/signalr"
	DefaultDisconnectTimeout = 30 * time.Second
	DefaultConnectionTimeout = 110 * time.Second
	// transportConnectTimeout is what negotiate tells clients to allow a
	// transport to connect, in seconds.
	transportConnectTimeout = 5
	// HubName is the benchmark's classic hub.
	HubName = "Signalrbench"
)

// Config is the classic side's own settings; zero fields take the
// defaults above.
type Config struct {
	Path              string // without a trailing slash
	DisconnectTimeout time.Duration
	// ConnectionTimeout is how long a long poll waits for messages.
	ConnectionTimeout time.Duration
	// RedirectNegotiate makes Path's negotiate answer as an app server in
	// Azure SignalR Service's ASP.NET mode does: a redirect to the
	// emulated service's /aspnetclient with a client token (azure.go).
	// Needs the host's Azure emulation.
	RedirectNegotiate bool
}

func (c Config) withDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.DisconnectTimeout == 0 {
		c.DisconnectTimeout = DefaultDisconnectTimeout
	}
	if c.ConnectionTimeout == 0 {
		c.ConnectionTimeout = DefaultConnectionTimeout
	}
	return c
}

// Hub is the classic side of the reference hub, on a host it shares with
// the other protocols.
type Hub struct {
	*core.Host
	cfg      Config
	signer   signer
	upgrader *websocket.Upgrader
	home     *space
	lifetime *core.Lifetime[*conn]
	delayed  *core.DelayQueue[delivery] // slow mode's Measure calls
}

// New builds the classic side on host.
func New(host *core.Host, cfg Config) *Hub {
	spaces := core.NewSpaces[*conn](host)
	home, _ := spaces.Named(strings.ToLower(HubName))
	h := &Hub{
		Host:     host,
		cfg:      cfg.withDefaults(),
		signer:   newSigner(),
		upgrader: transport.NewUpgrader(),
		home:     home,
		lifetime: core.NewLifetime[*conn](host),
	}
	h.delayed = core.NewDelayQueue(host, h.send)
	return h
}

// Serves reports whether r is for the classic endpoints: the app path,
// and with the Azure emulation the service's client path.
func (h *Hub) Serves(r *http.Request) bool {
	_, ok := h.base(r.URL.Path)
	return ok
}

// base is the endpoint path p is under: the app path, or the service's
// client path when the hub emulates Azure.
func (h *Hub) base(p string) (string, bool) {
	switch {
	case under(p, h.cfg.Path):
		return h.cfg.Path, true
	case h.EmulatesAzure() && under(p, aspnet.AzureClientPath):
		return aspnet.AzureClientPath, true
	}
	return "", false
}

func under(p, base string) bool { return p == base || strings.HasPrefix(p, base+"/") }

// ServeHTTP routes a request by the last segment of its path, as
// PersistentConnection does; on the service's client path every request
// needs the client token the redirect issued.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base, _ := h.base(r.URL.Path)
	if base == aspnet.AzureClientPath && !h.authorizeClient(w, r) {
		return
	}
	switch op := strings.TrimPrefix(r.URL.Path, base); op {
	case aspnet.PathNegotiate:
		h.serveAppNegotiate(w, r, base)
	case aspnet.PathPing:
		writeJSON(w, aspnet.PingResponse)
	case aspnet.PathConnect, aspnet.PathReconnect, aspnet.PathPoll, aspnet.PathSend, aspnet.PathStart, aspnet.PathAbort:
		h.serveConnection(w, r, op)
	default:
		http.NotFound(w, r)
	}
}

// Beat is the heartbeat's classic part: a keep-alive for every connection
// a transport holds that was sent nothing for the keep-alive interval, the
// end of those no transport held for the disconnect timeout.
func (h *Hub) Beat(now int64) {
	for _, c := range h.lifetime.Open() {
		expired, keepAlive := c.beat(now, int64(h.cfg.DisconnectTimeout), int64(h.Config.KeepAliveInterval))
		switch {
		case expired:
			h.disconnect(c)
		case keepAlive:
			c.poke()
		}
	}
}

// Drop ends up to n open connections (every one when n <= 0) as how
// says, and returns how many it ended.
func (h *Hub) Drop(how core.Drill, n int) int {
	return h.lifetime.Drop(n, func(*conn) bool { return true }, func(c *conn) { c.drop(how) })
}

// CloseAll ends every connection: their transports close.
func (h *Hub) CloseAll() {
	for _, c := range h.lifetime.Open() {
		h.disconnect(c)
	}
}

// disconnect ends c and takes it out of the roster.
func (h *Hub) disconnect(c *conn) {
	if c.end() {
		h.lifetime.Untrack(c, c.space, c.id, "", c.groups)
		h.Conns.Done()
		h.ReleaseConnection()
	}
}

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write([]byte(body))
}
