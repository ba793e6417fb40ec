package aspnetclient

import (
	"encoding/json"
	"strconv"

	"github.com/hubprobe/hubprobe/aspnet"
)

// ErrProtocol is package aspnet's: every failure caused by bytes from the
// server that break the classic protocol wraps it.
var ErrProtocol = aspnet.ErrProtocol

// handleFrame applies one frame from the server, decoded into c.frame
// (the read goroutine's own): a bare hub result, or an envelope whose
// cursor, groups token and messages it takes. It reports whether the frame
// was the init message.
func (c *Conn) handleFrame(b []byte) (init bool, err error) {
	f := &c.frame
	if err := aspnet.DecodeFrame(b, f); err != nil {
		return false, err
	}
	if f.Kind == aspnet.ResultFrame {
		c.settle(&f.Result)
		return false, nil
	}
	return c.handleEnvelope(&f.Envelope)
}

// dispatch handles one item of an envelope's messages: the hub's call to
// the client ({"H","M","A"}), or an answer to an invocation (with I),
// which may carry H as its hub-exception flag.
func (c *Conn) dispatch(raw json.RawMessage) error {
	inv := &c.inv
	if err := aspnet.DecodeInvocation(raw, inv); err == nil && !inv.HasID {
		if h := c.handler(inv.Method); h != nil {
			h(inv.Args)
		}
		return nil
	}
	r := &c.result
	if err := aspnet.DecodeHubResult(raw, r); err != nil {
		return err
	}
	c.settle(r)
	return nil
}

// settle hands an answer to the Invoke waiting for it; answers to Send,
// progress and late answers find nobody and are dropped.
func (c *Conn) settle(r *aspnet.HubResult) {
	if r.HasProgress {
		return
	}
	c.mu.Lock()
	done, ok := c.calls[r.ID]
	delete(c.calls, r.ID)
	c.mu.Unlock()
	switch {
	case !ok:
	case r.HasError:
		done <- callResult{err: &InvocationError{Message: r.Error}}
	default:
		done <- callResult{result: append(json.RawMessage(nil), r.Result...)}
	}
}

// appendInvocation writes {"H":hub,"M":method,"A":[args],"I":id} as the
// JavaScript client does, I a number. The id's digits stay on the stack.
func appendInvocation(dst []byte, hub, method string, args []json.RawMessage, id uint64) []byte {
	var digits [20]byte
	inv := aspnet.Invocation{Hub: hub, Method: method, Args: args,
		ID: string(strconv.AppendUint(digits[:0], id, 10)), HasID: true, NumericID: true}
	return aspnet.AppendInvocation(dst, &inv)
}

// connectionData is the connectionData query value naming the hub.
func connectionData(hub string) string { return string(aspnet.AppendConnectionData(nil, hub)) }
