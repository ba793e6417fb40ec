package transport

import (
	"net"
	"sync"
)

// Cork is a connection whose writes can be held and then sent together in
// one write: a hub that answers one client message with several frames
// sends them in one segment, which the client takes with one read and one
// wake-up instead of one per frame. Writes made while it holds (a control
// frame from another goroutine) join the held ones, in order.
type Cork struct {
	net.Conn
	mu      sync.Mutex
	holding bool
	held    *[]byte // lent by the batch pool only while holding
}

// Write sends p, or keeps it for Release while the cork holds.
func (c *Cork) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.holding {
		*c.held = append(*c.held, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// Hold keeps every write until Release.
func (c *Cork) Hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.holding {
		c.holding, c.held = true, GetBatch()
	}
}

// Release sends what was held in one write and stops holding. Its error
// is the write's: the frames the writers were told were sent are lost.
func (c *Cork) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.holding {
		return nil
	}
	c.holding = false
	held := c.held
	c.held = nil
	defer PutBatch(held)
	if len(*held) == 0 {
		return nil
	}
	_, err := c.Conn.Write(*held)
	return err
}
