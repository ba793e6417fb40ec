package aspnethub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/throttle"
)

// measureMethod is the client method every benchmark message calls.
const measureMethod = "Measure"

// method is one of Signalrbench's methods: its arity, and what it does.
type method struct {
	args int
	call func(h *Hub, c *conn, args []json.RawMessage) error
}

// methods are Signalrbench's, as Azure/azure-signalr-bench's
// AspNetAppServer has them, and hubprobe's own BatchTest (batch.go);
// names match without regard to case, as HubDispatcher matches them.
var methods = map[string]method{
	"echo":             {2, (*Hub).echo},
	"broadcast":        {2, (*Hub).broadcast},
	"sendtoconnection": {3, (*Hub).sendToConnection},
	"joingroup":        {1, (*Hub).joinGroup},
	"leavegroup":       {1, (*Hub).leaveGroup},
	"groupbroadcast":   {3, (*Hub).groupBroadcast},
	"batchtest":        {2, (*Hub).batchTest},
}

// lookupMethod finds the method called name, without regard to case. An
// ASCII name is lowercased on the stack; only others take a copy.
func lookupMethod(name string) (method, bool) {
	var buf [32]byte
	if len(name) > len(buf) || !isASCII(name) {
		m, ok := methods[strings.ToLower(name)]
		return m, ok
	}
	lower := buf[:len(name)]
	for i := range lower {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	m, ok := methods[string(lower)]
	return m, ok
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// serveSend reads the data field of a /send POST, invokes it, and answers
// with its result.
func (h *Hub) serveSend(w http.ResponseWriter, r *http.Request, c *conn) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSendBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The message could not be read.", http.StatusBadRequest)
		return
	}
	var inv aspnet.Invocation
	writeJSON(w, string(h.invoke(nil, c, []byte(r.PostForm.Get(aspnet.FormData)), &inv)))
}

// invoke runs one hub invocation, decoded into inv (whose names and
// argument space a WebSocket's reader reuses message after message), and
// appends its result frame to dst.
func (h *Hub) invoke(dst []byte, c *conn, data []byte, inv *aspnet.Invocation) []byte {
	h.Metrics.Received.Inc()
	result := aspnet.HubResult{}
	err := aspnet.DecodeInvocation(data, inv)
	result.ID = inv.ID
	switch {
	case err != nil:
		err = fmt.Errorf("the invocation could not be read")
	case !strings.EqualFold(inv.Hub, HubName):
		err = answer(fmt.Sprintf(errMsgUnknownHub, inv.Hub))
	case !h.WithinRate(c.space.Limiter): // counted as throttled
		err = fmt.Errorf("%s", throttle.MessageLimitText)
	default:
		err = h.call(c, inv)
	}
	if err != nil {
		result.Error, result.HasError = err.Error(), true
	}
	return aspnet.AppendHubResult(dst, &result)
}

func (h *Hub) call(c *conn, inv *aspnet.Invocation) error {
	m, ok := lookupMethod(inv.Method)
	if !ok || len(inv.Args) != m.args {
		return answer(fmt.Sprintf("'%s' method could not be resolved.", inv.Method))
	}
	return m.call(h, c, inv.Args)
}

// measure is the hub-to-client call Measure(ticks, payload), in a buffer
// of its exact size: one allocation, not one per doubling.
func measure(args []json.RawMessage) json.RawMessage {
	size := len(`{"H":"","M":"","A":[]}`) + len(HubName) + len(measureMethod)
	for _, a := range args {
		size += len(a) + len(",")
	}
	inv := aspnet.Invocation{Hub: HubName, Method: measureMethod, Args: args}
	return aspnet.AppendInvocation(make([]byte, 0, size), &inv)
}

func (h *Hub) echo(c *conn, a []json.RawMessage) error {
	h.deliver(delivery{to: core.ToCaller, caller: c, msg: measure(a)})
	return nil
}

func (h *Hub) broadcast(_ *conn, a []json.RawMessage) error {
	h.deliver(delivery{to: core.ToAll, msg: measure(a)})
	return nil
}

func (h *Hub) sendToConnection(c *conn, a []json.RawMessage) error {
	id, err := stringArg(a[0])
	if err != nil {
		return err
	}
	h.deliver(delivery{to: core.ToConnection, key: id, msg: measure(a[1:])})
	return nil
}

func (h *Hub) groupBroadcast(c *conn, a []json.RawMessage) error {
	group, err := stringArg(a[0])
	if err != nil {
		return err
	}
	h.deliver(delivery{to: core.ToGroup, key: group, msg: measure(a[1:])})
	return nil
}

func (h *Hub) joinGroup(c *conn, a []json.RawMessage) error {
	group, err := stringArg(a[0])
	if err != nil {
		return err
	}
	h.Mu.Lock()
	c.space.Join(c, c.id, group, &c.groups)
	h.Mu.Unlock()
	c.groupsChanged()
	return nil
}

func (h *Hub) leaveGroup(c *conn, a []json.RawMessage) error {
	group, err := stringArg(a[0])
	if err != nil {
		return err
	}
	h.Mu.Lock()
	c.space.Leave(c, group, c.groups)
	h.Mu.Unlock()
	c.groupsChanged()
	return nil
}

// stringArg reads an argument that must be a non-empty JSON string.
func stringArg(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return "", fmt.Errorf("a group or connection id must be a non-empty string")
	}
	return s, nil
}
