package aspnethub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hubprobe/hubprobe/aspnet"
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
// AspNetAppServer has them; names match without regard to case, as
// HubDispatcher matches them.
var methods = map[string]method{
	"echo":             {2, func(h *Hub, c *conn, a []json.RawMessage) error { c.enqueue(measure(a)); return nil }},
	"broadcast":        {2, func(h *Hub, c *conn, a []json.RawMessage) error { h.toAll(measure(a)); return nil }},
	"sendtoconnection": {3, (*Hub).sendToConnection},
	"joingroup":        {1, (*Hub).joinGroup},
	"leavegroup":       {1, (*Hub).leaveGroup},
	"groupbroadcast":   {3, (*Hub).groupBroadcast},
}

// serveSend reads the data field of a /send POST, invokes it, and answers
// with its result.
func (h *Hub) serveSend(w http.ResponseWriter, r *http.Request, c *conn) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSendBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The message could not be read.", http.StatusBadRequest)
		return
	}
	writeJSON(w, string(h.invoke(c, []byte(r.PostForm.Get(aspnet.FormData)))))
}

// invoke runs one hub invocation and returns its result frame.
func (h *Hub) invoke(c *conn, data []byte) []byte {
	h.Metrics.Received.Inc()
	var inv aspnet.Invocation
	result := aspnet.HubResult{}
	err := aspnet.DecodeInvocation(data, &inv)
	result.ID = inv.ID
	switch {
	case err != nil:
		err = fmt.Errorf("the invocation could not be read")
	case !strings.EqualFold(inv.Hub, HubName):
		err = answer(fmt.Sprintf(errMsgUnknownHub, inv.Hub))
	case !h.WithinRate(c.space.Limiter): // counted as throttled
		err = fmt.Errorf("%s", throttle.MessageLimitText)
	default:
		err = h.call(c, &inv)
	}
	if err != nil {
		result.Error, result.HasError = err.Error(), true
	}
	return aspnet.AppendHubResult(nil, &result)
}

func (h *Hub) call(c *conn, inv *aspnet.Invocation) error {
	m, ok := methods[strings.ToLower(inv.Method)]
	if !ok || len(inv.Args) != m.args {
		return answer(fmt.Sprintf("'%s' method could not be resolved.", inv.Method))
	}
	return m.call(h, c, inv.Args)
}

// measure is the hub-to-client call Measure(ticks, payload).
func measure(args []json.RawMessage) json.RawMessage {
	inv := aspnet.Invocation{Hub: HubName, Method: measureMethod, Args: args}
	return aspnet.AppendInvocation(nil, &inv)
}

func (h *Hub) sendToConnection(c *conn, a []json.RawMessage) error {
	id, err := stringArg(a[0])
	if err != nil {
		return err
	}
	if target := h.lookup(id); target != nil {
		target.enqueue(measure(a[1:]))
	}
	return nil
}

func (h *Hub) groupBroadcast(c *conn, a []json.RawMessage) error {
	group, err := stringArg(a[0])
	if err != nil {
		return err
	}
	msg := measure(a[1:])
	for _, target := range h.members(group) {
		target.enqueue(msg)
	}
	return nil
}

func (h *Hub) toAll(msg json.RawMessage) {
	h.Mu.RLock()
	targets := make([]*conn, 0, len(h.home.Conns))
	for _, t := range h.home.Conns {
		targets = append(targets, t)
	}
	h.Mu.RUnlock()
	for _, t := range targets {
		t.enqueue(msg)
	}
}

// members lists a group's connections.
func (h *Hub) members(group string) []*conn {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	members := make([]*conn, 0, len(h.home.Groups[group]))
	for t := range h.home.Groups[group] {
		members = append(members, t)
	}
	return members
}

func (h *Hub) joinGroup(c *conn, a []json.RawMessage) error {
	group, err := stringArg(a[0])
	if err != nil {
		return err
	}
	h.rejoin(c, []string{group})
	return nil
}

// rejoin adds c to groups and owes it a new groups token.
func (h *Hub) rejoin(c *conn, groups []string) {
	h.Mu.Lock()
	for _, g := range groups {
		c.space.Join(c, c.id, g, &c.groups)
	}
	h.Mu.Unlock()
	c.groupsChanged()
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
