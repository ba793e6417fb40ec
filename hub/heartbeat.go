package hub

import (
	"time"
)

// heartbeat is the hub's one timer goroutine, as in ASP.NET: it sends
// keep-alive Pings, closes clients that went silent, expires unused
// negotiate tokens and samples CPU for Load.
func (h *Hub) heartbeat() {
	t := time.NewTicker(h.opts.heartbeatPeriod())
	defer t.Stop()
	var conns []*conn
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			conns = h.beat(conns[:0])
		}
	}
}

func (h *Hub) beat(conns []*conn) []*conn {
	h.mu.RLock()
	for _, c := range h.byID {
		conns = append(conns, c)
	}
	h.mu.RUnlock()
	now := h.now()
	for _, c := range conns {
		switch {
		case now-c.lastRead.Load() > int64(h.opts.ClientTimeout):
			c.log.Info().Dur("timeout", h.opts.ClientTimeout).Msg("client timed out")
			c.requestClose(closeWithError(errMsgClientTimeout))
		case now-c.lastWrite.Load() >= int64(h.opts.KeepAliveInterval):
			c.enqueuePing()
		}
	}
	clear(conns) // keep no closed connection alive until the next beat
	h.tokens.expire(now)
	h.load.record(time.Now())
	return conns
}
