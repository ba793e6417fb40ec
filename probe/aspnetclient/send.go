package aspnetclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// EndpointSend is the send POST's endpoint as the HTTP transports report
// it to clientconn.Observer.HTTPResponse; the others are the request's
// path (start, ping, abort, poll, reconnect) or the transport's name.
const EndpointSend = "send"

// poster is the send half of the HTTP transports: each message one POST
// of the form field data, as the JavaScript client sends it. The hub
// answers invocations on the receiving half.
type poster struct{ c *Conn }

func (p poster) write(ctx context.Context, b []byte) error {
	c := p.c
	if c.o.WriteTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.WriteTimeout)
		defer cancel()
	}
	res, err := c.request(ctx, http.MethodPost, c.s.requestURL(EndpointSend, c.tname()), url.Values{"data": {string(b)}})
	if err != nil {
		return &TransportError{Request: EndpointSend, Err: err}
	}
	defer clientconn.DiscardBody(res)
	c.o.Observer.HTTPResponse(EndpointSend, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return &TransportError{Request: EndpointSend, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
			Err: clientconn.Refusal("unexpected HTTP status", res.StatusCode, "the server no longer has this connection")}
	}
	c.o.Observer.BytesSent(len(b))
	return nil
}
