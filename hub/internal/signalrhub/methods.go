package signalrhub

import (
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/signalr"
)

// Routing fields of the benchmark payload, as the vendor's hub reads them.
const (
	connectionIDField = "information.ConnectionId"
	groupNameField    = "information.GroupName"
)

// method is one hub method. Non-streaming methods return a result in the
// connection's protocol encoding (nil for void) or an error message.
type method struct {
	name      string
	streaming bool
	call      func(c *conn, m *signalr.Message) (result []byte, errMsg string)
}

// methods is keyed by the lower-case name: hub methods match
// case-insensitively, like ASP.NET's.
var methods = map[string]*method{}

func init() {
	for _, m := range []*method{
		{name: "Echo", call: (*conn).echo},
		{name: "Broadcast", call: (*conn).broadcast},
		{name: "SendToClient", call: (*conn).sendToClient},
		{name: "SendToGroup", call: (*conn).sendToGroup},
		{name: "JoinGroup", call: (*conn).joinGroup},
		{name: "LeaveGroup", call: (*conn).leaveGroup},
		{name: "ConnectionId", call: (*conn).connectionID},
		{name: "GetConnectionId", call: (*conn).getConnectionID},
		{name: "ServerPush", call: (*conn).serverPush},
		{name: "StreamingEcho", streaming: true},
	} {
		methods[lowerASCII(m.name)] = m
	}
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// lookupMethod lower-cases name on the stack so the hot path does not
// allocate.
func lookupMethod(name string) *method {
	var buf [32]byte
	if len(name) > len(buf) {
		return nil
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return methods[string(buf[:len(name)])]
}

func (c *conn) invoke(m *signalr.Message, asStream bool) {
	meth := lookupMethod(m.Target)
	var result []byte
	var errMsg string
	switch {
	case meth == nil:
		errMsg = fmt.Sprintf("Unknown hub method '%s'", m.Target)
	case meth.streaming && !asStream:
		errMsg = fmt.Sprintf("The client attempted to invoke the streaming '%s' method with a non-streaming invocation.", m.Target)
	case !meth.streaming && asStream:
		errMsg = fmt.Sprintf("The client attempted to invoke the non-streaming '%s' method with a streaming invocation.", m.Target)
	case meth.streaming:
		if errMsg = c.startEcho(m); errMsg == "" {
			return // the stream sends its own Completion
		}
	case len(m.StreamIDs) > 0:
		errMsg = invokeError(m, "the method takes no streams")
	default:
		result, errMsg = meth.call(c, m)
	}
	if m.InvocationID == "" {
		if errMsg != "" {
			c.log.Debug().Str("target", m.Target).Str("error", errMsg).Msg("non-blocking invocation failed")
		}
		return
	}
	c.reply(completion(m.InvocationID, result, errMsg))
}

func invokeError(m *signalr.Message, detail string) string {
	return fmt.Sprintf("Failed to invoke '%s' due to an error on the server: %s.", m.Target, detail)
}

// payloadArg returns the single map argument of the payload methods.
func (c *conn) payloadArg(m *signalr.Message) ([]byte, string) {
	if len(m.Arguments) != 1 {
		return nil, invokeError(m, fmt.Sprintf("expected 1 argument, got %d", len(m.Arguments)))
	}
	if !c.cd.isObject(m.Arguments[0]) {
		return nil, invokeError(m, "the argument is not an object")
	}
	return m.Arguments[0], ""
}

// routedPayload returns the payload and the value of its routing field.
func (c *conn) routedPayload(m *signalr.Message, field string) ([]byte, string, string) {
	p, errMsg := c.payloadArg(m)
	if errMsg != "" {
		return nil, "", errMsg
	}
	key, ok := c.cd.field(p, field)
	if !ok {
		return nil, "", invokeError(m, fmt.Sprintf("the payload has no string %q", field))
	}
	return p, key, ""
}

func recordLatency(payload []byte) signalr.Message {
	return signalr.Message{Type: signalr.InvocationType, Target: "RecordLatency", Arguments: []json.RawMessage{payload}}
}

func (c *conn) echo(m *signalr.Message) ([]byte, string) {
	p, errMsg := c.payloadArg(m)
	if errMsg == "" {
		c.hub.deliver(delivery{to: core.ToCaller, space: c.space, caller: c, msg: recordLatency(p)})
	}
	return nil, errMsg
}

func (c *conn) broadcast(m *signalr.Message) ([]byte, string) {
	p, errMsg := c.payloadArg(m)
	if errMsg == "" {
		c.hub.deliver(delivery{to: core.ToAll, space: c.space, caller: c, msg: recordLatency(p)})
	}
	return nil, errMsg
}

func (c *conn) sendToClient(m *signalr.Message) ([]byte, string) {
	p, id, errMsg := c.routedPayload(m, connectionIDField)
	if errMsg == "" {
		c.hub.deliver(delivery{to: core.ToConnection, space: c.space, caller: c, key: id, msg: recordLatency(p)})
	}
	return nil, errMsg
}

func (c *conn) sendToGroup(m *signalr.Message) ([]byte, string) {
	p, group, errMsg := c.routedPayload(m, groupNameField)
	if errMsg == "" {
		c.hub.deliver(delivery{to: core.ToGroup, space: c.space, caller: c, key: group, msg: recordLatency(p)})
	}
	return nil, errMsg
}

// groupArg reads the group name; arguments after it are accepted and
// ignored, for hubs whose JoinGroup takes more.
func (c *conn) groupArg(m *signalr.Message) (string, string) {
	if len(m.Arguments) == 0 {
		return "", invokeError(m, "expected a group name argument")
	}
	g, ok := c.cd.str(m.Arguments[0])
	if !ok {
		return "", invokeError(m, "the group name is not a string")
	}
	return g, ""
}

func (c *conn) joinGroup(m *signalr.Message) ([]byte, string) {
	g, errMsg := c.groupArg(m)
	if errMsg == "" {
		c.hub.addToGroup(c, g)
		c.reply(invocation("JoinGroup"))
	}
	return nil, errMsg
}

func (c *conn) leaveGroup(m *signalr.Message) ([]byte, string) {
	g, errMsg := c.groupArg(m)
	if errMsg == "" {
		c.hub.removeFromGroup(c, g)
		c.reply(invocation("LeaveGroup"))
	}
	return nil, errMsg
}

func (c *conn) connectionID(*signalr.Message) ([]byte, string) {
	c.reply(invocation("ConnectionId", c.cd.quote(nil, c.id)))
	return nil, ""
}

func (c *conn) getConnectionID(*signalr.Message) ([]byte, string) {
	return c.cd.quote(nil, c.id), ""
}
