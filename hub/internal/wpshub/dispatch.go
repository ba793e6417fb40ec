package wpshub

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Ack error names beyond the ones the webpubsub package lists: the
// service's documentation expects more to appear.
const errorBadRequest = "BadRequest"

var pongFrame, _ = webpubsub.AppendFrame(nil, &webpubsub.Frame{Kind: webpubsub.KindPong})

// handle answers one frame from the client.
func (c *conn) handle(binary bool, data []byte) error {
	if c.protocol == "" {
		return c.handleSimple(binary, data)
	}
	if binary {
		return closeWith(websocket.CloseUnsupportedData, "Invalid message: "+c.protocol+" frames are text.")
	}
	var f webpubsub.Frame
	if err := c.dec.Decode(data, &f); err != nil {
		return closeWith(websocket.ClosePolicyViolation, "Invalid message: "+frameProblem(err))
	}
	switch f.Kind {
	case webpubsub.KindPing:
		c.enqueueOwn(queued{b: pongFrame})
		return nil
	case webpubsub.KindSequenceAck:
		if c.reliable {
			c.unacked.ack(f.SequenceID)
		}
		return nil
	case webpubsub.KindJoinGroup, webpubsub.KindLeaveGroup, webpubsub.KindSendToGroup, webpubsub.KindEvent:
		if !c.hub.WithinRate(c.space.Limiter) {
			return closeWith(websocket.ClosePolicyViolation, throttle.MessageLimitText)
		}
		return c.request(&f)
	}
	return closeWith(websocket.ClosePolicyViolation, fmt.Sprintf("Invalid message: a %v frame is not a client request.", f.Kind))
}

// frameProblem is what a decode error says, without the package prefix.
func frameProblem(err error) string {
	msg, _ := strings.CutPrefix(err.Error(), "webpubsub: invalid frame: ")
	return msg
}

// handleSimple raises a simple client's frame as the "message" user event.
func (c *conn) handleSimple(binary bool, data []byte) error {
	if !c.hub.WithinRate(c.space.Limiter) {
		return closeWith(websocket.ClosePolicyViolation, throttle.MessageLimitText)
	}
	dt := webpubsub.DataTypeText
	if binary {
		dt = webpubsub.DataTypeBinary
	}
	return c.raiseEvent(userEvent{name: webpubsub.EventMessage, dataType: dt, data: bytes.Clone(data)})
}

// request serves joinGroup, leaveGroup, sendToGroup and event. A repeated
// ackId is answered Duplicate without doing it again.
func (c *conn) request(f *webpubsub.Frame) error {
	if f.HasAckID && !c.acks.first(f.AckID) {
		c.ack(f.AckID, &webpubsub.AckError{
			Name:    webpubsub.ErrorDuplicate,
			Message: fmt.Sprintf("Message with ack-id: %d has been processed", f.AckID),
		})
		return nil
	}
	var fail *webpubsub.AckError
	switch f.Kind {
	case webpubsub.KindEvent:
		return c.raiseEvent(userEvent{
			name: f.Event, dataType: f.DataType, data: bytes.Clone(f.Data), ackID: f.AckID, hasAck: f.HasAckID,
		})
	case webpubsub.KindSendToGroup:
		fail = c.sendToGroup(f)
	default:
		fail = c.joinOrLeave(f)
	}
	switch {
	case f.HasAckID:
		c.ack(f.AckID, fail)
	case fail != nil: // a fire-and-forget request that failed ends the connection
		return closeWith(websocket.ClosePolicyViolation, fail.Message)
	}
	return nil
}

// ack answers ackID: success when fail is nil.
func (c *conn) ack(ackID uint64, fail *webpubsub.AckError) {
	f := webpubsub.Frame{Kind: webpubsub.KindAck, AckID: ackID, HasAckID: true, Success: fail == nil}
	if fail != nil {
		f.Error = *fail
	}
	b, _ := webpubsub.AppendFrame(nil, &f) // an ack always encodes
	c.enqueueOwn(queued{b: b})
}

func (c *conn) joinOrLeave(f *webpubsub.Frame) *webpubsub.AckError {
	if fail := c.checkGroup(roleJoinLeaveGroup, f.Group); fail != nil {
		return fail
	}
	h := c.hub
	h.Mu.Lock()
	defer h.Mu.Unlock()
	if f.Kind == webpubsub.KindJoinGroup {
		h.joinLocked(c, f.Group)
	} else {
		h.leaveLocked(c, f.Group)
	}
	return nil
}

// checkGroup refuses an invalid group name, or a group the connection's
// roles do not cover.
func (c *conn) checkGroup(role, group string) *webpubsub.AckError {
	if !validGroup(group) {
		return &webpubsub.AckError{Name: errorBadRequest, Message: "The group name must be 1 to 1024 characters."}
	}
	if !c.roles.allows(role, group) {
		return &webpubsub.AckError{
			Name:    webpubsub.ErrorForbidden,
			Message: fmt.Sprintf("The connection has no permission %s for group %s.", role, quoteShort(group)),
		}
	}
	return nil
}

// sendToGroup fans the data out to the group's members (the sender too,
// unless noEcho), whether or not the sender is one of them.
func (c *conn) sendToGroup(f *webpubsub.Frame) *webpubsub.AckError {
	if fail := c.checkGroup(roleSendToGroup, f.Group); fail != nil {
		return fail
	}
	m := &message{frame: webpubsub.Frame{
		Kind: webpubsub.KindGroupMessage, Group: f.Group, FromUserID: c.user,
		DataType: f.DataType, Data: bytes.Clone(f.Data),
	}}
	skip := (*conn)(nil)
	if f.NoEcho {
		skip = c
	}
	if err := c.hub.deliver(c.space, address{to: core.ToGroup, key: f.Group, skip: skip, own: c}, m); err != nil {
		return &webpubsub.AckError{Name: errorBadRequest, Message: "The data is not valid for its dataType."}
	}
	return nil
}

// quoteShort quotes a name a client chose for a message, cut at 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return fmt.Sprintf("%q", s)
}
