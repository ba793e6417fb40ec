package aspnethub

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/hub/internal/core"
)

// replayLimit bounds the messages a connection keeps for polls and
// reconnects that have not caught up.
const replayLimit = 1024

type space = core.Space[*conn]

// conn is one classic connection: its place in the roster, the messages it
// was sent, and whether a transport holds it.
type conn struct {
	hub    *Hub
	id     string
	space  *space
	groups map[string]struct{} // guarded by Host.Mu

	mu          sync.Mutex
	log         []json.RawMessage // messages first, first+1, …
	first       uint64
	next        uint64
	groupsToken string     // owed to the client in the next envelope; "" once sent
	attached    int        // transports holding the connection
	idleSince   int64      // hub clock when the last transport let go
	lastOut     int64      // hub clock when the client was last sent or owed something
	keepAlive   bool       // the heartbeat asks for a keep-alive
	farewell    core.Drill // owed to the client in the next envelope; "" for none
	gone        bool
	wake        chan struct{} // a message or a keep-alive is waiting
	done        chan struct{} // closed when the connection ends
}

func newConn(h *Hub, id string, sp *space) *conn {
	now := h.Now()
	return &conn{hub: h, id: id, space: sp, wake: make(chan struct{}, 1), done: make(chan struct{}), idleSince: now, lastOut: now}
}

// enqueue adds a hub-to-client message and wakes the transport.
func (c *conn) enqueue(msg json.RawMessage) {
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return
	}
	c.log = append(c.log, msg)
	c.next++
	c.lastOut = c.hub.Now()
	if len(c.log) > replayLimit {
		c.log = c.log[1:]
		c.first++
	}
	c.mu.Unlock()
	c.hub.Metrics.Sent.Inc()
	c.poke()
}

func (c *conn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// awaitWake waits for the connection's next wake-up (a message or a
// keep-alive); false when ctx or the connection ended first.
func (c *conn) awaitWake(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-c.done:
		return false
	case <-c.wake:
		return true
	}
}

// envelope appends the envelope of every message from cursor on, and
// what else the client is owed (its groups token), and returns the next
// cursor. keepAliveOnly reports an envelope with nothing to say.
func (c *conn) envelope(dst []byte, cursor uint64, init bool) (out []byte, next uint64, keepAliveOnly bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cursor = max(cursor, c.first)
	env := aspnet.Envelope{Initialized: init, HasMessages: true}
	if cursor < c.next {
		env.Messages = c.log[cursor-c.first:]
	}
	env.GroupsToken, c.groupsToken = c.groupsToken, ""
	c.sayFarewell(&env)
	c.keepAlive = false
	var digits [20]byte // the cursor's text stays on the stack
	env.Cursor = string(strconv.AppendUint(digits[:0], c.next, 10))
	keepAliveOnly = !init && len(env.Messages) == 0 && env.GroupsToken == "" && env.Error == "" && !env.Disconnect && !env.Reconnect
	return aspnet.AppendEnvelope(dst, &env), c.next, keepAliveOnly
}

// pending reports whether the client at cursor is owed an envelope.
func (c *conn) pending(cursor uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cursor < c.next || c.groupsToken != "" || c.farewell != "" || c.gone
}

// sayFarewell puts the drill the connection is owed into env: an error
// or a disconnect, after which the hub forgets the connection once the
// client had time to read it, or a reconnect, which the client mends.
// Called with c.mu held.
func (c *conn) sayFarewell(env *aspnet.Envelope) {
	switch c.farewell {
	case core.DrillCloseError:
		env.Error = core.DrillText
	case core.DrillDisconnect:
		env.Disconnect = true
	case core.DrillCloseReconnect:
		env.Reconnect = true
	default:
		return
	}
	if c.farewell != core.DrillCloseReconnect {
		time.AfterFunc(core.CloseGrace/4, func() { c.hub.disconnect(c) })
	}
	c.farewell = ""
}

// drop ends c as how says: at once for an abort, or with the envelope it
// is owed.
func (c *conn) drop(how core.Drill) {
	if how == core.DrillAbort || how == core.DrillRestart {
		c.hub.disconnect(c)
		return
	}
	c.mu.Lock()
	c.farewell = how
	c.mu.Unlock()
	c.poke()
}

// keepAliveDue reports and clears the heartbeat's request.
func (c *conn) keepAliveDue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	due := c.keepAlive
	c.keepAlive = false
	if due {
		c.lastOut = c.hub.Now()
	}
	return due
}

// groupsChanged owes the client a groups token for its groups now. Called
// without Host.Mu, which it takes for reading.
func (c *conn) groupsChanged() {
	c.hub.Mu.RLock()
	list := make([]string, 0, len(c.groups))
	for g := range c.groups {
		list = append(list, g)
	}
	c.hub.Mu.RUnlock()
	sort.Strings(list)
	token := c.hub.signer.groupsToken(c.id, list)
	c.mu.Lock()
	c.groupsToken = token
	c.mu.Unlock()
	c.poke()
}

// attach marks a transport as holding the connection; false when it is
// gone.
func (c *conn) attach() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return false
	}
	c.attached++
	return true
}

func (c *conn) detach() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attached--
	c.idleSince = c.hub.Now()
}

// end marks the connection gone; true the first time.
func (c *conn) end() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return false
	}
	c.gone = true
	close(c.done)
	return true
}

// beat asks an attached connection that was sent nothing for
// keepAliveAfter for a keep-alive (and reports asking), and tells whether
// a detached one has been idle past the disconnect timeout. A client
// counts any message as a sign of life, so a busy connection needs none.
func (c *conn) beat(now, disconnectAfter, keepAliveAfter int64) (expired, keepAlive bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attached > 0 {
		if now-c.lastOut >= keepAliveAfter {
			c.keepAlive = true
		}
		return false, c.keepAlive
	}
	return now-c.idleSince > disconnectAfter, false
}
