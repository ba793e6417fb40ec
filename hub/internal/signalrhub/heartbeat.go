package signalrhub

import "github.com/hubprobe/hubprobe/hub/internal/core"

// Beat is the SignalR side of the hub's heartbeat: keep-alive Pings, a
// Close for clients that went silent, and the end of negotiate tokens no
// transport took in time.
func (h *Hub) Beat(now int64) {
	conns := h.spaces.AppendConns(h.beating[:0])
	for _, c := range conns {
		switch {
		case h.Config.IdleTimeout > 0 && c.silentFor(now) > int64(h.Config.IdleTimeout):
			c.log.Info().Dur("idle_timeout", h.Config.IdleTimeout).Msg("idle connection cut")
			c.drop(core.DrillAbort)
		case c.silentFor(now) > int64(h.Config.ClientTimeout):
			c.log.Info().Dur("timeout", h.Config.ClientTimeout).Msg("client timed out")
			c.requestClose(closeWithError(errMsgClientTimeout))
			if c.lp != nil {
				c.lp.Terminate() // no poll would come to collect the Close
			}
		case c.lp == nil && now-c.lastWrite.Load() >= int64(h.Config.KeepAliveInterval):
			c.enqueuePing() // a Long Polling client is kept alive by its polls
		}
	}
	clear(conns) // keep no closed connection alive until the next beat
	h.beating = conns[:0]
	h.tokens.Expire(now)
}

// silentFor is how long the client has not shown it is alive: by sending,
// or on Long Polling by polling.
func (c *conn) silentFor(now int64) int64 {
	if c.lp != nil {
		return c.lp.IdleFor(now)
	}
	return now - c.lastRead.Load()
}
