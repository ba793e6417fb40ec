package wpshub

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// message is a group or server message on its way to Web PubSub
// connections. Its JSON frame is encoded once, when the first subprotocol
// client needs it, and shared by every receiver's queue; simple clients
// get the data itself.
type message struct {
	frame   webpubsub.Frame // KindGroupMessage or KindServerMessage; Data is the message's own copy
	json    []byte
	encoded bool
	err     error
}

func (m *message) out(c *conn) (queued, error) {
	if c.protocol == "" {
		return queued{b: m.frame.Data, binary: m.frame.DataType == webpubsub.DataTypeBinary}, nil
	}
	if !m.encoded {
		m.json, m.err = webpubsub.AppendFrame(nil, &m.frame)
		m.encoded = true
	}
	return queued{b: m.json, message: true}, m.err
}

// address says who receives a message.
type address struct {
	to       core.To  // core.ToAll, core.ToGroup, core.ToUser or core.ToConnection
	key      string   // group, user id or connection id
	excluded []string // connection ids a REST send skips
	skip     *conn    // the sender of a noEcho send
	own      *conn    // the sender, whose own copy may wait for room
}

var receiversPool = sync.Pool{New: func() any { return new([]*conn) }}

// deliver sends m to the connections addr names, now or in slow mode
// after the delivery delay (m must then be valid for its data type, which
// it is checked for first).
func (h *Hub) deliver(s *space, addr address, m *message) error {
	wait := h.DeliveryDelay()
	if wait <= 0 {
		return h.send(s, addr, m)
	}
	if m.frame.DataType == webpubsub.DataTypeJSON && !json.Valid(m.frame.Data) {
		return errInvalidJSON
	}
	addr.own = nil // the slow-mode goroutine must never wait for a queue
	h.delayed.Defer(wait, delayedSend{s, addr, m})
	return nil
}

// delayedSend is a message held back in slow mode.
type delayedSend struct {
	space *space
	addr  address
	m     *message
}

var errInvalidJSON = errors.New("the data is not valid JSON")

// send sends m to the connections addr names. Receivers are listed
// under the hub's lock and sent to after it, so a sender waiting for room
// in its own queue holds no lock.
func (h *Hub) send(s *space, addr address, m *message) error {
	rp := receiversPool.Get().(*[]*conn)
	receivers := h.receivers(s, addr, (*rp)[:0])
	var err error
	for _, c := range receivers {
		var o queued
		if o, err = m.out(c); err != nil {
			break
		}
		if c == addr.own {
			c.enqueueOwn(o)
		} else {
			c.enqueue(o)
		}
	}
	clear(receivers)
	*rp = receivers[:0]
	receiversPool.Put(rp)
	return err
}

func (h *Hub) receivers(s *space, addr address, dst []*conn) []*conn {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	add := func(c *conn) {
		if c != addr.skip && !c.closed.Load() && !slices.Contains(addr.excluded, c.id) {
			dst = append(dst, c)
		}
	}
	switch addr.to {
	case core.ToAll:
		for _, c := range s.Conns {
			add(c)
		}
	case core.ToGroup:
		for c := range s.Groups[addr.key] {
			add(c)
		}
	case core.ToUser:
		for c := range s.Users[addr.key] {
			add(c)
		}
	case core.ToConnection:
		if c := s.Conns[addr.key]; c != nil {
			add(c)
		}
	}
	return dst
}
