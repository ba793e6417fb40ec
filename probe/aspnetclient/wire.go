package aspnetclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ErrProtocol wraps every failure caused by bytes from the server that
// break the classic protocol.
var ErrProtocol = errors.New("probe: classic ASP.NET SignalR protocol error")

// The protocol versions the JavaScript client 2.4.3 accepts from a
// server, and the one it sends; redirects need 2.0 or later.
const clientProtocol = "2.1"

var (
	supportedProtocols = []string{"1.5", "2.0", "2.1"}
	redirectProtocols  = []string{"2.0", "2.1"}
)

// negotiateResponse is the server's answer to negotiate, or Azure SignalR
// Service's redirect (RedirectUrl, AccessToken) in ASP.NET mode.
// Timeouts are seconds.
type negotiateResponse struct {
	URL                     string   `json:"Url"`
	ConnectionToken         string   `json:"ConnectionToken"`
	ConnectionID            string   `json:"ConnectionId"`
	KeepAliveTimeout        *float64 `json:"KeepAliveTimeout"`
	DisconnectTimeout       float64  `json:"DisconnectTimeout"`
	ConnectionTimeout       float64  `json:"ConnectionTimeout"`
	TryWebSockets           bool     `json:"TryWebSockets"`
	ProtocolVersion         string   `json:"ProtocolVersion"`
	TransportConnectTimeout float64  `json:"TransportConnectTimeout"`
	LongPollDelay           float64  `json:"LongPollDelay"`
	RedirectURL             string   `json:"RedirectUrl"`
	AccessToken             string   `json:"AccessToken"`
	Error                   string   `json:"Error"`
	// AvailableTransports is ASP.NET Core's negotiate, never classic's.
	AvailableTransports json.RawMessage `json:"availableTransports"`
}

// envelope is one persistent response: the cursor C, the messages M, the
// init flag S, the groups token G, the reconnect flag T, the long-poll
// delay L, the disconnect flag D and an error E. A bare hub result (I) may
// come on its own. The keep-alive is the empty object.
type envelope struct {
	Cursor      *string           `json:"C"`
	Messages    []json.RawMessage `json:"M"`
	Init        json.RawMessage   `json:"S"`
	GroupsToken *string           `json:"G"`
	Reconnect   json.RawMessage   `json:"T"`
	Disconnect  json.RawMessage   `json:"D"`
	Error       string            `json:"E"`
	ResultID    *string           `json:"I"`
}

// hubMessage is one item of M: the hub's call to the client (H, M, A), or
// the answer to an invocation (I with R, or E and the error data D), or
// its progress (P).
type hubMessage struct {
	Hub      string            `json:"H"`
	Method   string            `json:"M"`
	Args     []json.RawMessage `json:"A"`
	ID       json.RawMessage   `json:"I"`
	Result   json.RawMessage   `json:"R"`
	Error    *string           `json:"E"`
	Progress json.RawMessage   `json:"P"`
}

// decodeEnvelope parses one persistent response. Keep-alives decode to
// the zero envelope.
func decodeEnvelope(b []byte) (envelope, error) {
	var e envelope
	if len(bytes.TrimSpace(b)) == 0 {
		return e, fmt.Errorf("%w: empty message", ErrProtocol)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%w: invalid persistent response: %v", ErrProtocol, err)
	}
	return e, nil
}

func (e *envelope) initialized() bool { return present(e.Init) }

func (e *envelope) disconnected() bool { return present(e.Disconnect) }

func (e *envelope) shouldReconnect() bool { return present(e.Reconnect) }

func present(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// resultID is the invocation id an answer names: the hub writes it as a
// string, older servers as a number.
func (m *hubMessage) resultID() (string, bool) {
	if len(m.ID) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(m.ID, &s) == nil {
		return s, true
	}
	var n uint64
	if json.Unmarshal(m.ID, &n) == nil {
		return strconv.FormatUint(n, 10), true
	}
	return "", false
}

// appendInvocation writes {"H":hub,"M":method,"A":[args],"I":id} as the
// JavaScript client does (I a number).
func appendInvocation(dst []byte, hub, method string, args []json.RawMessage, id uint64) []byte {
	dst = append(dst, `{"H":`...)
	dst = appendString(dst, hub)
	dst = append(dst, `,"M":`...)
	dst = appendString(dst, method)
	dst = append(dst, `,"A":[`...)
	for i, a := range args {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, a...)
	}
	dst = append(dst, `],"I":`...)
	dst = strconv.AppendUint(dst, id, 10)
	return append(dst, '}')
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// connectionData is the connectionData query value naming the hub.
func connectionData(hub string) string {
	return `[{"name":` + string(appendString(nil, hub)) + `}]`
}

// serverResponse is the start and ping requests' answer.
type serverResponse struct {
	Response string `json:"Response"`
}
