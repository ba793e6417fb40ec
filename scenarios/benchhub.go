package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// benchHub is the benchmark hub's contract as the hub-method kinds use it,
// over one client's wire: ASP.NET Core SignalR's BenchHub (coreHub), whose
// methods take hubprobe's payload dictionary with its route inside, or
// classic ASP.NET SignalR's Signalrbench (classicHub), whose methods take
// the route, a tick count and the payload as a string. So one kind runs
// on either.
type benchHub interface {
	echo(ctx context.Context, payload json.RawMessage) error
	broadcast(ctx context.Context, payload json.RawMessage) error
	sendToConnection(ctx context.Context, id string, payload json.RawMessage) error
	sendToGroup(ctx context.Context, group string, payload json.RawMessage) error
	joinGroup(ctx context.Context, group string) error
	// connectionID asks the hub for the connection's id, for connections
	// whose connect did not tell it.
	connectionID(ctx context.Context) (string, error)
}

type coreHub struct{ c *signalrclient.Conn }

func (h coreHub) echo(ctx context.Context, p json.RawMessage) error {
	return h.c.Send(ctx, "Echo", p)
}

func (h coreHub) broadcast(ctx context.Context, p json.RawMessage) error {
	return h.c.Send(ctx, "Broadcast", p)
}

func (h coreHub) sendToConnection(ctx context.Context, _ string, p json.RawMessage) error {
	return h.c.Send(ctx, "SendToClient", p)
}

func (h coreHub) sendToGroup(ctx context.Context, _ string, p json.RawMessage) error {
	return h.c.Send(ctx, "SendToGroup", p)
}

func (h coreHub) joinGroup(ctx context.Context, group string) error {
	_, err := h.c.Invoke(ctx, "JoinGroup", quoted(group))
	return err
}

func (h coreHub) connectionID(ctx context.Context) (string, error) {
	raw, err := h.c.Invoke(ctx, "GetConnectionId")
	if err != nil {
		return "", fmt.Errorf("GetConnectionId: %w", err)
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil || id == "" {
		return "", fmt.Errorf("GetConnectionId returned no id")
	}
	return id, nil
}

// classicHub speaks to the benchmark's classic Signalrbench hub: Echo,
// Broadcast, SendToConnection and GroupBroadcast each take a tick count
// and a string payload (hubprobe's payload, as JSON text), which the hub
// hands back in Measure(ticks, payload).
type classicHub struct{ c *aspnetclient.Conn }

func (h classicHub) echo(ctx context.Context, p json.RawMessage) error {
	return h.send(ctx, "Echo", p)
}

func (h classicHub) broadcast(ctx context.Context, p json.RawMessage) error {
	return h.send(ctx, "Broadcast", p)
}

func (h classicHub) sendToConnection(ctx context.Context, id string, p json.RawMessage) error {
	return h.send(ctx, "SendToConnection", p, id)
}

func (h classicHub) sendToGroup(ctx context.Context, group string, p json.RawMessage) error {
	return h.send(ctx, "GroupBroadcast", p, group)
}

func (h classicHub) joinGroup(ctx context.Context, group string) error {
	_, err := h.c.Invoke(ctx, "JoinGroup", quoted(group))
	return err
}

func (h classicHub) connectionID(context.Context) (string, error) { return h.c.ConnectionID(), nil }

// send invokes method with the route (a connection id or group, when
// given), the tick count the classic hub's methods take (hubprobe's send
// stamp, which the payload carries too and the receiver reads from there)
// and p as a JSON string: all three written into one pooled buffer, which
// the client is done with when Send returns.
func (h classicHub) send(ctx context.Context, method string, p json.RawMessage, route ...string) error {
	bp := clientconn.GetBuf()
	defer clientconn.PutBuf(bp)
	b := (*bp)[:0]
	for _, r := range route {
		b = jsonscan.AppendQuotedString(b, r)
	}
	routeEnd := len(b)
	b = strconv.AppendInt(b, stamp(), 10)
	ticksEnd := len(b)
	b = jsonscan.AppendQuoted(b, p)
	*bp = b
	args := [3]json.RawMessage{b[:routeEnd], b[routeEnd:ticksEnd], b[ticksEnd:]}
	if len(route) == 0 {
		return h.c.Send(ctx, method, args[1:]...)
	}
	return h.c.Send(ctx, method, args[:]...)
}

func quoted(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

// classicMeasure is the receiver's side of classicHub: Measure(ticks,
// payload) carries the payload as a JSON string, unquoted into a pooled
// buffer for the latency record, which keeps none of it.
func classicMeasure(run *Run, receiver int) aspnetclient.Handler {
	return func(args []json.RawMessage) {
		if len(args) < 2 {
			return
		}
		bp := clientconn.GetBuf()
		defer clientconn.PutBuf(bp)
		p, ok := appendStringValue((*bp)[:0], args[1])
		*bp = p
		if ok {
			run.recordLatency(receiver, []json.RawMessage{p})
		}
	}
}

// appendStringValue appends the value of v, which must be one JSON string,
// as encoding/json would decode it.
func appendStringValue(dst, v []byte) ([]byte, bool) {
	s := jsonscan.New(v, 1)
	if s.Peek() != '"' {
		return dst, false
	}
	content, _, err := s.ScanString()
	if err != nil || s.End() != nil {
		return dst, false
	}
	return jsonscan.AppendUnquoted(dst, content), true
}
