package hub

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// wpsMessage is a group or server message on its way to Web PubSub
// connections. Its JSON frame is encoded once, when the first subprotocol
// client needs it, and shared by every receiver's queue; simple clients
// get the data itself.
type wpsMessage struct {
	frame   webpubsub.Frame // KindGroupMessage or KindServerMessage; Data is the message's own copy
	json    []byte
	encoded bool
	err     error
}

func (m *wpsMessage) out(c *wpsConn) (wpsOut, error) {
	if c.protocol == "" {
		return wpsOut{b: m.frame.Data, binary: m.frame.DataType == webpubsub.DataTypeBinary}, nil
	}
	if !m.encoded {
		m.json, m.err = webpubsub.AppendFrame(nil, &m.frame)
		m.encoded = true
	}
	return wpsOut{b: m.json, message: true}, m.err
}

// wpsAddress says who receives a message.
type wpsAddress struct {
	to       deliveryTarget // toAll, toGroup, toUser or toConnection
	key      string         // group, user id or connection id
	excluded []string       // connection ids a REST send skips
	skip     *wpsConn       // the sender of a noEcho send
	own      *wpsConn       // the sender, whose own copy may wait for room
}

var wpsReceiversPool = sync.Pool{New: func() any { return new([]*wpsConn) }}

// wpsDeliver sends m to the connections addr names, now or in slow mode
// after the delivery delay (m must then be valid for its data type, which
// it is checked for first).
func (h *Hub) wpsDeliver(s *wpsSpace, addr wpsAddress, m *wpsMessage) error {
	wait := h.deliveryDelay()
	if wait <= 0 {
		return h.wpsSend(s, addr, m)
	}
	if m.frame.DataType == webpubsub.DataTypeJSON && !json.Valid(m.frame.Data) {
		return errInvalidJSON
	}
	addr.own = nil // the slow-mode goroutine must never wait for a queue
	if !h.delayed.push(h.now()+wait, delivery{run: func() { _ = h.wpsSend(s, addr, m) }}) {
		h.log.Warn().Msg("slow-mode queue full; message dropped")
	}
	return nil
}

var errInvalidJSON = errors.New("the data is not valid JSON")

// wpsSend sends m to the connections addr names. Receivers are listed
// under the hub's lock and sent to after it, so a sender waiting for room
// in its own queue holds no lock.
func (h *Hub) wpsSend(s *wpsSpace, addr wpsAddress, m *wpsMessage) error {
	rp := wpsReceiversPool.Get().(*[]*wpsConn)
	receivers := h.wpsReceivers(s, addr, (*rp)[:0])
	var err error
	for _, c := range receivers {
		var o wpsOut
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
	wpsReceiversPool.Put(rp)
	return err
}

func (h *Hub) wpsReceivers(s *wpsSpace, addr wpsAddress, dst []*wpsConn) []*wpsConn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	add := func(c *wpsConn) {
		if c != addr.skip && !c.closed.Load() && !slices.Contains(addr.excluded, c.id) {
			dst = append(dst, c)
		}
	}
	switch addr.to {
	case toAll:
		for _, c := range s.conns {
			add(c)
		}
	case toGroup:
		for c := range s.groups[addr.key] {
			add(c)
		}
	case toUser:
		for c := range s.users[addr.key] {
			add(c)
		}
	case toConnection:
		if c := s.conns[addr.key]; c != nil {
			add(c)
		}
	}
	return dst
}
