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
	for _, s := range h.spaces {
		for _, c := range s.conns {
			conns = append(conns, c)
		}
	}
	h.mu.RUnlock()
	now := h.now()
	for _, c := range conns {
		switch {
		case c.silentFor(now) > int64(h.opts.ClientTimeout):
			c.log.Info().Dur("timeout", h.opts.ClientTimeout).Msg("client timed out")
			c.requestClose(closeWithError(errMsgClientTimeout))
			if c.lp != nil {
				c.lp.Terminate() // no poll would come to collect the Close
			}
		case c.lp == nil && now-c.lastWrite.Load() >= int64(h.opts.KeepAliveInterval):
			c.enqueuePing() // a Long Polling client is kept alive by its polls
		}
	}
	clear(conns) // keep no closed connection alive until the next beat
	h.beatWebPubSub(now)
	h.tokens.expire(now)
	h.load.record(time.Now())
	return conns
}

// silentFor is how long the client has not shown it is alive: by sending,
// or on Long Polling by polling.
func (c *conn) silentFor(now int64) int64 {
	if c.lp != nil {
		return c.lp.IdleFor(now)
	}
	return now - c.lastRead.Load()
}
