package aspnetclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/hubprobe/hubprobe/aspnet"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// EndpointSend is the send POST's endpoint as the HTTP transports report
// it to clientconn.Observer.HTTPResponse; the others are the request's
// path (start, ping, abort, poll, reconnect) or the transport's name.
const EndpointSend = "send"

// poster is the send half of the HTTP transports: each message one POST
// of the form field data, as the JavaScript client sends it. The server
// answers an invocation in the POST's response: its hub result.
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
	defer res.Body.Close()
	c.o.Observer.HTTPResponse(EndpointSend, res.StatusCode)
	if res.StatusCode != http.StatusOK {
		return &TransportError{Request: EndpointSend, StatusCode: res.StatusCode, Body: clientconn.ErrorBody(res),
			Err: clientconn.Refusal("unexpected HTTP status", res.StatusCode, "the server no longer has this connection")}
	}
	c.o.Observer.BytesSent(len(b))
	return p.settleAnswer(res.Body)
}

// settleAnswer reads the send's answer, a hub result when it is not
// empty, and hands it to the Invoke waiting for it.
func (p poster) settleAnswer(body io.Reader) error {
	answer, err := readBounded(body, nil, p.c.o.MaxMessageSize)
	if err != nil {
		return &TransportError{Request: EndpointSend, Err: err}
	}
	if len(bytes.TrimSpace(answer)) == 0 {
		return nil
	}
	var f aspnet.Frame
	if err := aspnet.DecodeFrame(answer, &f); err != nil {
		return err
	}
	if f.Kind == aspnet.ResultFrame {
		p.c.settle(&f.Result)
	}
	return nil
}
