package classicwire

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// conn speaks to the benchmark's classic Signalrbench hub: Echo,
// Broadcast, SendToConnection and GroupBroadcast each take a tick count
// and a string payload (hubprobe's payload, as JSON text), which the hub
// hands back in Measure(ticks, payload).
type conn struct{ *aspnetclient.Conn }

func (c conn) ID() string { return c.ConnectionID() }

// Dropped is why the connection ended, its protocol errors told apart,
// and when.
func (c conn) Dropped() (string, time.Time) {
	return clientconn.DropReason(c.Err(), func(err error) bool { return errors.Is(err, aspnetclient.ErrProtocol) }), c.EndedAt()
}

func (c conn) Echo(ctx context.Context, p json.RawMessage) error {
	return c.send(ctx, "Echo", p)
}

func (c conn) Broadcast(ctx context.Context, p json.RawMessage) error {
	return c.send(ctx, "Broadcast", p)
}

func (c conn) SendToConnection(ctx context.Context, id string, p json.RawMessage) error {
	return c.send(ctx, "SendToConnection", p, id)
}

func (c conn) SendToGroup(ctx context.Context, group string, p json.RawMessage) error {
	return c.send(ctx, "GroupBroadcast", p, group)
}

func (c conn) JoinGroup(ctx context.Context, group string) error {
	_, err := c.Invoke(ctx, "JoinGroup", jsonscan.AppendQuotedString(nil, group))
	return err
}

// epoch anchors the tick counts the hub's methods take.
var epoch = time.Now()

// send invokes method with the route (a connection id or group, when
// given), a tick count (microseconds on this process's clock, which the
// hub hands back and the receiver ignores: the payload carries the send
// stamp it reads) and p as a JSON string: all three written into one
// pooled buffer, which the client is done with when Send returns.
func (c conn) send(ctx context.Context, method string, p json.RawMessage, route ...string) error {
	bp := clientconn.GetBuf()
	defer clientconn.PutBuf(bp)
	b := (*bp)[:0]
	for _, r := range route {
		b = jsonscan.AppendQuotedString(b, r)
	}
	routeEnd := len(b)
	b = strconv.AppendInt(b, time.Since(epoch).Microseconds(), 10)
	ticksEnd := len(b)
	b = jsonscan.AppendQuoted(b, p)
	*bp = b
	args := [3]json.RawMessage{b[:routeEnd], b[routeEnd:ticksEnd], b[ticksEnd:]}
	if len(route) == 0 {
		return c.Send(ctx, method, args[1:]...)
	}
	return c.Send(ctx, method, args[:]...)
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
