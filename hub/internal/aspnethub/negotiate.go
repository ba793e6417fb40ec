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

// serveNegotiate answers with a connection offer for the Signalrbench hub.
func (h *Hub) serveNegotiate(w http.ResponseWriter, r *http.Request) {
	if err := checkConnectionData(r); err != nil {
		transport.WriteText(w, http.StatusInternalServerError, err.Error())
		return
	}
	id := core.NewID()
	keepAlive := 2 * h.Config.KeepAliveInterval.Seconds()
	offer := aspnet.Negotiate{
		URL:                     h.cfg.Path,
		ConnectionToken:         h.signer.connectionToken(id),
		ConnectionID:            id,
		KeepAliveTimeout:        &keepAlive,
		DisconnectTimeout:       h.cfg.DisconnectTimeout.Seconds(),
		ConnectionTimeout:       h.cfg.ConnectionTimeout.Seconds(),
		TryWebSockets:           true,
		ProtocolVersion:         aspnet.ServerProtocol,
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
