package hub

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// Ack error names beyond the ones the webpubsub package lists: the
// service's documentation expects more to appear.
const wpsErrorBadRequest = "BadRequest"

var wpsPong, _ = webpubsub.AppendFrame(nil, &webpubsub.Frame{Kind: webpubsub.KindPong})

// handle answers one frame from the client.
func (c *wpsConn) handle(binary bool, data []byte) error {
	if c.protocol == "" {
		return c.handleSimple(binary, data)
	}
	if binary {
		return closeWith(websocket.CloseUnsupportedData, "Invalid message: "+c.protocol+" frames are text.")
	}
	var f webpubsub.Frame
	if err := c.dec.Decode(data, &f); err != nil {
		return closeWith(websocket.ClosePolicyViolation, "Invalid message: "+wpsFrameProblem(err))
	}
	switch f.Kind {
	case webpubsub.KindPing:
		c.enqueueOwn(wpsOut{b: wpsPong})
		return nil
	case webpubsub.KindSequenceAck:
		if c.reliable {
			c.unacked.ack(f.SequenceID)
		}
		return nil
	case webpubsub.KindJoinGroup, webpubsub.KindLeaveGroup, webpubsub.KindSendToGroup, webpubsub.KindEvent:
		if !c.withinRate() {
			return closeWith(websocket.ClosePolicyViolation, throttle.MessageLimitText)
		}
		return c.request(&f)
	}
	return closeWith(websocket.ClosePolicyViolation, fmt.Sprintf("Invalid message: a %v frame is not a client request.", f.Kind))
}

// wpsFrameProblem is what a decode error says, without the package prefix.
func wpsFrameProblem(err error) string {
	msg, _ := strings.CutPrefix(err.Error(), "webpubsub: invalid frame: ")
	return msg
}

// withinRate takes one message from the hub name's rate limit, if any.
func (c *wpsConn) withinRate() bool {
	l := c.space.limiter
	if l == nil || l.allow(c.hub.now()) {
		return true
	}
	c.hub.metrics.throttled.WithLabelValues(throttle.MessageLimit).Inc()
	return false
}

// handleSimple raises a simple client's frame as the "message" user event.
func (c *wpsConn) handleSimple(binary bool, data []byte) error {
	if !c.withinRate() {
		return closeWith(websocket.ClosePolicyViolation, throttle.MessageLimitText)
	}
	dt := webpubsub.DataTypeText
	if binary {
		dt = webpubsub.DataTypeBinary
	}
	return c.raiseEvent(wpsEvent{name: webpubsub.EventMessage, dataType: dt, data: bytes.Clone(data)})
}

// request serves joinGroup, leaveGroup, sendToGroup and event. A repeated
// ackId is answered Duplicate without doing it again.
func (c *wpsConn) request(f *webpubsub.Frame) error {
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
		return c.raiseEvent(wpsEvent{
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
func (c *wpsConn) ack(ackID uint64, fail *webpubsub.AckError) {
	f := webpubsub.Frame{Kind: webpubsub.KindAck, AckID: ackID, HasAckID: true, Success: fail == nil}
	if fail != nil {
		f.Error = *fail
	}
	b, _ := webpubsub.AppendFrame(nil, &f) // an ack always encodes
	c.enqueueOwn(wpsOut{b: b})
}

func (c *wpsConn) joinOrLeave(f *webpubsub.Frame) *webpubsub.AckError {
	if fail := c.checkGroup(roleJoinLeaveGroup, f.Group); fail != nil {
		return fail
	}
	h := c.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.Kind == webpubsub.KindJoinGroup {
		h.joinWPSLocked(c, f.Group)
	} else {
		h.leaveWPSLocked(c, f.Group)
	}
	return nil
}

// checkGroup refuses an invalid group name, or a group the connection's
// roles do not cover.
func (c *wpsConn) checkGroup(role, group string) *webpubsub.AckError {
	if !validWPSGroup(group) {
		return &webpubsub.AckError{Name: wpsErrorBadRequest, Message: "The group name must be 1 to 1024 characters."}
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
func (c *wpsConn) sendToGroup(f *webpubsub.Frame) *webpubsub.AckError {
	if fail := c.checkGroup(roleSendToGroup, f.Group); fail != nil {
		return fail
	}
	m := &wpsMessage{frame: webpubsub.Frame{
		Kind: webpubsub.KindGroupMessage, Group: f.Group, FromUserID: c.user,
		DataType: f.DataType, Data: bytes.Clone(f.Data),
	}}
	skip := (*wpsConn)(nil)
	if f.NoEcho {
		skip = c
	}
	if err := c.hub.wpsDeliver(c.space, wpsAddress{to: toGroup, key: f.Group, skip: skip, own: c}, m); err != nil {
		return &webpubsub.AckError{Name: wpsErrorBadRequest, Message: "The data is not valid for its dataType."}
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
