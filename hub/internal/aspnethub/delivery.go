package aspnethub

import (
	"encoding/json"

	"github.com/hubprobe/hubprobe/hub/internal/core"
)

// delivery is a Measure call on its way out. Receivers are resolved when
// it is sent, so in slow mode a broadcast reaches whoever is connected
// then.
type delivery struct {
	to     core.To
	caller *conn  // for ToCaller
	key    string // connection id or group name
	msg    json.RawMessage
}

// deliver sends d now, or after the slow-mode delay (the host's
// DeliveryDelay) without holding up the invocation's result.
func (h *Hub) deliver(d delivery) {
	if wait := h.DeliveryDelay(); wait > 0 {
		h.delayed.Defer(wait, d)
		return
	}
	h.send(&d)
}

// send queues d's message on each of its receivers' connections.
func (h *Hub) send(d *delivery) {
	if d.to == core.ToCaller {
		d.caller.enqueue(d.msg)
		return
	}
	for _, c := range h.receivers(d) {
		c.enqueue(d.msg)
	}
}

// receivers lists the connections d goes to, under the hub's lock.
func (h *Hub) receivers(d *delivery) []*conn {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	var list []*conn
	switch d.to {
	case core.ToConnection:
		if c := h.home.Conns[d.key]; c != nil {
			list = append(list, c)
		}
	case core.ToAll:
		for _, c := range h.home.Conns {
			list = append(list, c)
		}
	case core.ToGroup:
		for c := range h.home.Groups[d.key] {
			list = append(list, c)
		}
	}
	return list
}
