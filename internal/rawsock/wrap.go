package rawsock

import (
	"context"
	"net"
)

// DialFunc is the dial function of an http.Transport or a WebSocket dialer.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer wraps dial (a plain net.Dialer's when nil) so that the
// connections it makes are wrapped.
func Dialer(dial DialFunc) DialFunc {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Wrap(c), nil
	}
}

// Listener wraps the connections l accepts.
func Listener(l net.Listener) net.Listener { return listener{l} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}
