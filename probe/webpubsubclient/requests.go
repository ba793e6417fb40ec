package webpubsubclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// pendingAck is a request waiting for its ack.
type pendingAck struct {
	op   string
	done chan error // buffered, one result: nil, or an *AckError
}

// JoinGroup joins group and waits for the service's ack. A Duplicate ack
// counts as joined. A refusal is an *AckError (errors.Is ErrForbidden when
// the token lacks the joinLeaveGroup role).
func (c *Conn) JoinGroup(ctx context.Context, group string) error {
	if group == "" {
		return errors.New("webpubsub client: join group: empty group name")
	}
	f := webpubsub.Frame{Kind: webpubsub.KindJoinGroup, Group: group}
	return c.request(ctx, "join group", &f, true)
}

// LeaveGroup leaves group and waits for the service's ack.
func (c *Conn) LeaveGroup(ctx context.Context, group string) error {
	if group == "" {
		return errors.New("webpubsub client: leave group: empty group name")
	}
	f := webpubsub.Frame{Kind: webpubsub.KindLeaveGroup, Group: group}
	return c.request(ctx, "leave group", &f, true)
}

// SendToGroup sends data to every member of group (this connection too,
// unless flags has NoEcho). With WaitAck it returns once the service
// acknowledged the send; otherwise once the frame is written. data is
// the payload as receivers will see it (JSON text, text, or raw bytes for
// binary, which goes out base64-encoded); JSON must be one valid value.
func (c *Conn) SendToGroup(ctx context.Context, group string, dataType webpubsub.DataType, data []byte, flags SendFlags) error {
	if group == "" {
		return errors.New("webpubsub client: send to group: empty group name")
	}
	f := webpubsub.Frame{Kind: webpubsub.KindSendToGroup, Group: group, NoEcho: flags&NoEcho != 0, DataType: dataType, Data: data}
	return c.request(ctx, "send to group", &f, flags&WaitAck != 0)
}

// SendEvent sends a custom event, which the service posts to the hub's
// event handler as azure.webpubsub.user.<event>; the handler's answer
// comes back as a server message. WaitAck waits for the service's ack
// (an *AckError errors.Is ErrInvocationFailed when the handler failed).
// NoEcho does not apply to events.
func (c *Conn) SendEvent(ctx context.Context, event string, dataType webpubsub.DataType, data []byte, flags SendFlags) error {
	switch {
	case event == "":
		return errors.New("webpubsub client: send event: empty event name")
	case flags&NoEcho != 0:
		return errors.New("webpubsub client: send event: NoEcho applies to group sends only")
	}
	f := webpubsub.Frame{Kind: webpubsub.KindEvent, Event: event, DataType: dataType, Data: data}
	return c.request(ctx, "send event", &f, flags&WaitAck != 0)
}

// request writes f and, with wait, numbers it with the next ackId and
// waits for the ack, for ctx or for the connection to end.
func (c *Conn) request(ctx context.Context, op string, f *webpubsub.Frame, wait bool) error {
	if !wait {
		return c.writeFrame(ctx, f)
	}
	done := make(chan error, 1)
	f.AckID, f.HasAckID = c.lastAckID.Add(1), true
	if !c.register(f.AckID, pendingAck{op: op, done: done}) {
		return c.state.ClosedErr()
	}
	if err := c.writeFrame(ctx, f); err != nil {
		c.forget(f.AckID)
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		c.forget(f.AckID)
		return fmt.Errorf("webpubsub client: %s: no ack for ackId %d: %w", op, f.AckID, ctx.Err())
	case <-c.state.Closing():
	}
	select {
	case err := <-done: // the ack came in just as the connection ended
		return err
	default:
		return c.state.ClosedErr()
	}
}

// register adds a pending ack and reports whether it could: not once the
// connection is ending.
func (c *Conn) register(id uint64, p pendingAck) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Ended() {
		return false
	}
	c.acks[id] = p
	return true
}

func (c *Conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.acks, id)
	c.mu.Unlock()
}
