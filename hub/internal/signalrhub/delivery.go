package signalrhub

import (
	"slices"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/signalr"
)

// delivery is a RecordLatency (or a REST send) on its way out. Receivers are
// resolved when it is sent, so in slow mode a broadcast reaches whoever is
// connected then.
type delivery struct {
	to       core.To
	space    *space
	caller   *conn    // nil for REST sends
	key      string   // connection id, group name or user id
	excluded []string // connection ids a REST send skips
	msg      signalr.Message
}

// deliver sends d now, or after the slow-mode delay without blocking the
// caller's read loop.
func (h *Hub) deliver(d delivery) {
	wait := h.DeliveryDelay()
	switch {
	case wait > 0:
		d.msg.Detach() // the payload outlives the input it was read from
		h.delayed.Defer(wait, d)
	case d.to == core.ToCaller:
		d.caller.reply(&d.msg) // to the outbox, in order with the Completion
	default:
		fanned := d // only this branch's copy moves to the heap, not every echo's
		h.send(&fanned, true)
	}
}

// send fans d out, encoding it once per hub protocol in use. With
// fromCaller (on the caller's read loop, not from the slow-mode queue) the
// caller's own copy goes to its outbox, which keeps it in order with the
// invocation's Completion; everyone else's goes to their send queue, which
// never blocks the sender.
func (h *Hub) send(d *delivery, fromCaller bool) {
	fo := fanout{msg: &d.msg, excluded: d.excluded}
	defer fo.release()
	own := d.caller
	if !fromCaller {
		own = nil
	}
	if d.to == core.ToCaller {
		fo.sendTo(d.caller, false)
		return
	}
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	switch d.to {
	case core.ToConnection:
		if c := d.space.Conns[d.key]; c != nil {
			fo.sendTo(c, c == own)
		}
	case core.ToAll:
		for _, c := range d.space.Conns {
			fo.sendTo(c, c == own)
		}
	case core.ToGroup:
		for c := range d.space.Groups[d.key] {
			fo.sendTo(c, c == own)
		}
	case core.ToUser:
		for c := range d.space.Users[d.key] {
			fo.sendTo(c, c == own)
		}
	}
}

// fanout holds one encoded frame per protocol for a message going to many
// receivers; every receiver's queue gets the same bytes.
type fanout struct {
	msg      *signalr.Message
	excluded []string
	frames   [numCodecs]*frame
	failed   bool
}

func (fo *fanout) sendTo(c *conn, own bool) {
	if fo.failed || c.cd == nil || c.closed.Load() {
		return
	}
	if len(fo.excluded) > 0 && slices.Contains(fo.excluded, c.id) {
		return
	}
	f := fo.frames[c.cd.index]
	if f == nil {
		var err error
		if f, err = encodeFrame(c.cd, fo.msg); err != nil {
			c.log.Error().Err(err).Msg("cannot encode message")
			fo.failed = true
			return
		}
		fo.frames[c.cd.index] = f
	}
	if own {
		c.outbox.appendFrame(f.b) // on the caller's reader, which owns the outbox
	} else {
		c.enqueue(f)
	}
}

func (fo *fanout) release() {
	for _, f := range fo.frames {
		if f != nil {
			f.release()
		}
	}
}
