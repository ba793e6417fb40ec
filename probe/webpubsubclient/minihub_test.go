package webpubsubclient

import (
	"sync"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// Group names the miniHub answers with a scripted failed ack.
var scriptedAckErrors = map[string]webpubsub.AckError{
	"forbidden": {Name: webpubsub.ErrorForbidden, Message: "No permission to join group"},
	"dup":       {Name: webpubsub.ErrorDuplicate, Message: "Message with ack-id: 1 has been processed"},
	"ise":       {Name: webpubsub.ErrorInternalServerError, Message: "Internal server error"},
	"later":     {Name: "Timeout", Message: "a name this client does not know"},
}

// miniHub is a compact service behaviour: groups with fan-out (noEcho
// honoured), roles checked, acks, events echoed back as server messages
// (as an event handler answering with the same data would), pongs, and a
// record of the sequenceAcks each connection sent.
type miniHub struct {
	mu       sync.Mutex
	groups   map[string]map[*svcConn]bool
	seqAcks  map[string][]uint64 // by connection id
	received chan string         // "connID kind" of every frame, when not nil
}

func newMiniHub() *miniHub {
	return &miniHub{groups: map[string]map[*svcConn]bool{}, seqAcks: map[string][]uint64{}}
}

// serve is a testService script.
func (h *miniHub) serve(c *svcConn) {
	defer h.leaveAll(c)
	if c.connected() != nil {
		return
	}
	for {
		f, err := c.read()
		if err != nil {
			return
		}
		if h.received != nil {
			h.received <- c.id + " " + f.Kind.String()
		}
		if h.handle(c, f) != nil {
			return
		}
	}
}

func (h *miniHub) handle(c *svcConn, f *webpubsub.Frame) error {
	switch f.Kind {
	case webpubsub.KindJoinGroup, webpubsub.KindLeaveGroup:
		return h.membership(c, f)
	case webpubsub.KindSendToGroup:
		if !c.hasRole(roleSendToGroup) {
			return h.ack(c, f, webpubsub.AckError{Name: webpubsub.ErrorForbidden, Message: "no sendToGroup role"})
		}
		h.deliver(c, f)
		return h.ack(c, f, webpubsub.AckError{})
	case webpubsub.KindEvent:
		echo := webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: f.DataType, Data: f.Data}
		if err := c.send(&echo); err != nil {
			return err
		}
		return h.ack(c, f, webpubsub.AckError{})
	case webpubsub.KindSequenceAck:
		h.mu.Lock()
		h.seqAcks[c.id] = append(h.seqAcks[c.id], f.SequenceID)
		h.mu.Unlock()
	case webpubsub.KindPing:
		return c.send(&webpubsub.Frame{Kind: webpubsub.KindPong})
	}
	return nil
}

func (h *miniHub) membership(c *svcConn, f *webpubsub.Frame) error {
	if e, scripted := scriptedAckErrors[f.Group]; scripted {
		return h.ack(c, f, e)
	}
	if !c.hasRole(roleJoinLeaveGroup) {
		return h.ack(c, f, webpubsub.AckError{Name: webpubsub.ErrorForbidden, Message: "no joinLeaveGroup role"})
	}
	h.mu.Lock()
	if f.Kind == webpubsub.KindJoinGroup {
		if h.groups[f.Group] == nil {
			h.groups[f.Group] = map[*svcConn]bool{}
		}
		h.groups[f.Group][c] = true
	} else {
		delete(h.groups[f.Group], c)
	}
	h.mu.Unlock()
	return h.ack(c, f, webpubsub.AckError{})
}

// deliver sends f's data to every member of its group, the sender too
// unless noEcho.
func (h *miniHub) deliver(from *svcConn, f *webpubsub.Frame) {
	h.mu.Lock()
	var members []*svcConn
	for m := range h.groups[f.Group] {
		if m != from || !f.NoEcho {
			members = append(members, m)
		}
	}
	h.mu.Unlock()
	for _, m := range members {
		msg := webpubsub.Frame{Kind: webpubsub.KindGroupMessage, Group: f.Group, FromUserID: from.user, DataType: f.DataType, Data: f.Data}
		_ = m.send(&msg)
	}
}

// ack answers f when it carries an ackId; a zero e is a success.
func (h *miniHub) ack(c *svcConn, f *webpubsub.Frame, e webpubsub.AckError) error {
	if !f.HasAckID {
		return nil
	}
	return c.send(&webpubsub.Frame{Kind: webpubsub.KindAck, AckID: f.AckID, Success: e == webpubsub.AckError{}, Error: e})
}

func (h *miniHub) leaveAll(c *svcConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, members := range h.groups {
		delete(members, c)
	}
}

func (h *miniHub) sequenceAcks(connID string) []uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uint64(nil), h.seqAcks[connID]...)
}
