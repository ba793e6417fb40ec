package aspnethub

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
)

// Answers of PersistentConnection and HubDispatcher to bad requests.
const (
	errMsgUnknownTransport = "Protocol error: Unknown transport."
	errMsgNoToken          = "Protocol error: Missing connection token."
	errMsgBadToken         = "The ConnectionId is in the incorrect format."
	errMsgBadGroupsToken   = "The groups token is not valid."
	errMsgGone             = "The connection has ended."
	errMsgAlreadyOpen      = "The connection is already open."
	errMsgBadFrameID       = "Invalid frameId."
	errMsgUnknownHub       = "'%s' Hub could not be resolved."
	errMsgNoHubs           = "No hubs were named in connectionData."
)

// serveAppNegotiate answers a negotiate at base: with a redirect to the
// emulated service on the app path in its ASP.NET mode, with an offer
// otherwise.
func (h *Hub) serveAppNegotiate(w http.ResponseWriter, r *http.Request, base string) {
	if h.cfg.RedirectNegotiate && base == h.cfg.Path {
		h.serveRedirect(w, r)
		return
	}
	h.serveNegotiate(w, r, base)
}

// serveNegotiate answers with a connection offer for the Signalrbench hub
// at base.
func (h *Hub) serveNegotiate(w http.ResponseWriter, r *http.Request, base string) {
	if err := checkConnectionData(r); err != nil {
		transport.WriteText(w, http.StatusInternalServerError, err.Error())
		return
	}
	id := core.NewID()
	keepAlive := 2 * h.Config.KeepAliveInterval.Seconds()
	offer := aspnet.Negotiate{
		URL:                     base,
		ConnectionToken:         h.signer.connectionToken(id),
		ConnectionID:            id,
		KeepAliveTimeout:        &keepAlive,
		DisconnectTimeout:       h.cfg.DisconnectTimeout.Seconds(),
		ConnectionTimeout:       h.cfg.ConnectionTimeout.Seconds(),
		TryWebSockets:           true,
		ProtocolVersion:         resolveProtocol(r.URL.Query().Get(aspnet.QueryClientProtocol)),
		TransportConnectTimeout: transportConnectTimeout,
	}
	writeJSON(w, string(aspnet.AppendNegotiate(nil, &offer)))
}

// checkConnectionData refuses a request naming a hub other than
// Signalrbench, or none.
func checkConnectionData(r *http.Request) error {
	hubs, err := aspnet.DecodeConnectionData([]byte(r.URL.Query().Get(aspnet.QueryConnectionData)))
	if err != nil || len(hubs) == 0 {
		return fmt.Errorf("%s", errMsgNoHubs)
	}
	for _, name := range hubs {
		if !strings.EqualFold(name, HubName) {
			return answer(fmt.Sprintf(errMsgUnknownHub, name))
		}
	}
	return nil
}

// answer is an error whose text is the server's answer, worded as
// ASP.NET SignalR words it (a sentence, with its full stop).
type answer string

func (a answer) Error() string { return string(a) }
