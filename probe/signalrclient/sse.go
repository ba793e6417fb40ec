package signalrclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/signalr"
)

// sseTransport receives over server-sent events (one long GET whose
// response is an event stream, each event's data one or more records)
// and sends with HTTP POST. It carries text only.
type sseTransport struct {
	*httpTransport
	body   io.ReadCloser
	events *sseReader
	frame  bytes.Reader
}

// dialSSE opens the event stream, traced with ctx's httptrace; failures
// are *clientconn.ConnectError.
func dialSSE(ctx context.Context, o *Options, target *transportTarget) (*sseTransport, error) {
	h := newHTTPTransport(o, target, TransportSSE)
	header := h.header.Clone()
	header.Set("Accept", "text/event-stream")
	header.Set("Cache-Control", "no-cache")
	req, err := h.newRequest(clientconn.TraceInto(h.ctx, ctx), http.MethodGet, h.url, nil, header)
	if err != nil {
		h.close()
		return nil, clientconn.NewConnectError(clientconn.PhaseTransport, err)
	}
	res, err := h.openStreamRequest(ctx, o, req, EndpointSSE)
	if err != nil {
		return nil, err
	}
	if ct := res.Header.Get("Content-Type"); !isEventStream(ct) {
		_ = res.Body.Close()
		h.close()
		return nil, &clientconn.ConnectError{Phase: clientconn.PhaseTransport, StatusCode: res.StatusCode,
			Err: fmt.Errorf("server answered the event stream request with Content-Type %q", ct)}
	}
	return &sseTransport{httpTransport: h, body: res.Body, events: newSSEReader(res.Body, int(o.MaxMessageSize))}, nil
}

func isEventStream(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "text/event-stream"
}

func (t *sseTransport) nextFrame() (int, io.Reader, error) {
	data, err := t.events.next()
	if err != nil {
		_ = t.body.Close()
		return 0, nil, t.streamErr(err)
	}
	t.frame.Reset(data)
	return t.frameType, &t.frame, nil
}

func (t *sseTransport) streamErr(err error) error {
	if f := t.failure.Load(); f != nil {
		return *f
	}
	switch {
	case errors.Is(err, signalr.ErrProtocol):
		return err
	case err == io.EOF:
		return &TransportError{Transport: TransportSSE, Request: EndpointSSE, Err: errors.New("the server ended the event stream")}
	}
	return redact.URLError(err)
}

// shutdown lets queued sends (the Close message) go out, then drops the
// stream, which is how a client ends an SSE connection.
func (t *sseTransport) shutdown(deadline time.Time) {
	t.flushUntil(deadline)
	t.close()
}

func (t *sseTransport) goodbye(error) {}
