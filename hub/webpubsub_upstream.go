package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/webpubsub"
)

const (
	// wpsHandshakeTimeout and wpsEventTimeout bound the abuse-protection
	// handshake and one event request.
	wpsHandshakeTimeout = 10 * time.Second
	wpsEventTimeout     = 30 * time.Second
	// wpsHandshakeRetry is how long a refused handshake stands before the
	// next event tries again; an accepted one stands for good.
	wpsHandshakeRetry = 30 * time.Second
	// maxHandshakes bounds the cached handshake results.
	maxHandshakes = 1024
)

// Results of event handler requests, the values of the metric's result
// label.
const (
	upstreamOK      = "ok"      // 2xx (and, for the handshake, the origin allowed)
	upstreamRefused = "refused" // an answer that refuses: non-2xx, or no allowed origin
	upstreamError   = "error"   // no answer: unreachable, timed out, unreadable
)

// upstream sends user events to the event handler, as the service does:
// CloudEvents in binary mode, each signed with the access key, to a URL
// template whose {hub} and {event} it fills in, after an abuse-protection
// handshake with each handler origin.
type upstream struct {
	template string
	key      string
	client   *http.Client
	h        *Hub
	ids      atomic.Uint64 // ce-id
	retry    time.Duration // wpsHandshakeRetry; shorter in tests

	mu     sync.Mutex
	checks map[string]*handshake // by handler origin and requesting origin
}

// handshake is the result of one abuse-protection handshake; done closes
// when err is final.
type handshake struct {
	done    chan struct{}
	err     error
	expires time.Time // zero: stands for good
}

// upstreamKey signs ce-signature: the access key, or nothing when local
// auth is disabled (the service then attaches no signature, its docs say).
func upstreamKey(opts Options) string {
	if opts.DisableLocalAuth {
		return ""
	}
	return opts.AccessKey
}

func newUpstream(h *Hub) *upstream {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	return &upstream{
		template: h.opts.WebPubSubEventHandler,
		key:      upstreamKey(h.opts),
		h:        h,
		retry:    wpsHandshakeRetry,
		checks:   make(map[string]*handshake),
		client: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// checkEventHandler validates the URL template: http or https, a host, and
// no placeholder but {hub} and {event}.
func checkEventHandler(template string) error {
	filled := strings.NewReplacer("{hub}", "hub", "{event}", "event").Replace(template)
	if strings.ContainsAny(filled, "{}") {
		return errors.New("the event handler URL may hold only the placeholders {hub} and {event}")
	}
	u, err := url.Parse(filled)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("the event handler URL must be an absolute http or https URL")
	}
	return nil
}

// url is the handler URL for an event of hub.
func (u *upstream) url(hub, event string) string {
	return strings.NewReplacer("{hub}", url.PathEscape(hub), "{event}", url.PathEscape(event)).Replace(u.template)
}

// redacted is a handler URL fit for a client's ack or a log: without its
// query, which may hold a function key.
func redacted(target string) string {
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		return target[:i]
	}
	return target
}

// wpsEvent is one user event on its way to the event handler.
type wpsEvent struct {
	name     string
	dataType webpubsub.DataType
	data     []byte // the event's own copy
	ackID    uint64
	hasAck   bool
}

// raiseEvent sends ev to the event handler on a goroutine of its own; with
// wpsEventsInFlight running, the reader waits for one to finish.
func (c *wpsConn) raiseEvent(ev wpsEvent) error {
	up := c.hub.wps.events
	if up == nil {
		c.eventFailed(ev, "No event handler is configured for event "+quoteShort(ev.name)+".", false)
		return nil
	}
	select {
	case c.eventSlots <- struct{}{}:
	case <-c.closing:
		return nil
	}
	c.events.Add(1)
	go func() {
		defer c.events.Done()
		defer func() { <-c.eventSlots }()
		defer func() {
			if r := recover(); r != nil {
				c.hub.metrics.panics.Inc()
				c.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("recovered from panic")
				c.requestClose(wpsCloseInternal)
			}
		}()
		up.deliver(c, ev)
	}()
	return nil
}

// deliver runs one event: handshake, request, answer.
func (u *upstream) deliver(c *wpsConn, ev wpsEvent) {
	if err := u.validate(c, c.space.name); err != nil {
		c.eventFailed(ev, err.Error(), false)
		return
	}
	status, contentType, body, err := u.post(c, ev)
	switch {
	case err != nil:
		u.h.metrics.upstream.WithLabelValues("event", upstreamError).Inc()
		c.eventFailed(ev, "The event handler did not answer: "+err.Error(), true)
	case status < 200 || status > 299:
		u.h.metrics.upstream.WithLabelValues("event", upstreamRefused).Inc()
		c.eventFailed(ev, fmt.Sprintf("The event handler answered %d.", status), true)
	default:
		u.h.metrics.upstream.WithLabelValues("event", upstreamOK).Inc()
		c.eventAnswered(ev, contentType, body)
	}
}

// post sends the event and reads the answer.
func (u *upstream) post(c *wpsConn, ev wpsEvent) (status int, contentType string, body []byte, err error) {
	ctx, cancel := context.WithTimeout(c.ctx, wpsEventTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url(c.space.name, ev.name), bytes.NewReader(ev.data))
	if err != nil {
		return 0, "", nil, errors.New("the event name makes an invalid URL")
	}
	e := webpubsub.NewUserEvent(c.space.name, c.id, ev.name, ev.dataType)
	e.ID = strconv.FormatUint(u.ids.Add(1), 10)
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	e.UserID, e.Origin, e.Subprotocol = c.user, c.origin, c.protocol
	if u.key != "" {
		e.Signature = webpubsub.Sign(c.id, u.key)
	}
	e.WriteHeader(req.Header)
	resp, err := u.client.Do(req)
	if err != nil {
		return 0, "", nil, errors.New(requestFailure(err))
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, restMaxBody+1))
	switch {
	case err != nil:
		return 0, "", nil, errors.New("the answer could not be read")
	case len(body) > restMaxBody:
		return 0, "", nil, errors.New("the answer is over 1 MiB")
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body, nil
}

// requestFailure names why a request to the handler failed, without the
// URL that *url.Error repeats.
func requestFailure(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "timed out"
		}
		err = ue.Err
	}
	return err.Error()
}

// eventAnswered delivers a 2xx answer's body to the sender, as a message
// from the server typed by the answer's Content-Type (binary when it names
// none of the three), then acks the event.
func (c *wpsConn) eventAnswered(ev wpsEvent, contentType string, body []byte) {
	if len(body) > 0 {
		dt, err := webpubsub.DataTypeForContentType(contentType)
		if err != nil {
			dt = webpubsub.DataTypeBinary
		}
		m := &wpsMessage{frame: webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: dt, Data: body}}
		if err := c.hub.wpsDeliver(c.space, wpsAddress{to: toConnection, key: c.id, own: c}, m); err != nil {
			c.eventFailed(ev, "The event handler's answer is not valid JSON.", false)
			return
		}
	}
	if ev.hasAck {
		c.ack(ev.ackID, nil)
	}
}

// eventFailed acks a failed event with InvocationFailed; without an ackId
// the event is dropped, or with drop the connection is, as the service
// drops a connection whose event the handler refused.
func (c *wpsConn) eventFailed(ev wpsEvent, msg string, drop bool) {
	switch {
	case ev.hasAck:
		c.ack(ev.ackID, &webpubsub.AckError{Name: webpubsub.ErrorInvocationFailed, Message: msg})
	case drop:
		c.requestClose(wpsClose{websocket.ClosePolicyViolation, msg})
	default:
		c.log.Debug().Str("event", ev.name).Str("reason", msg).Msg("event dropped")
	}
}

// validate returns the handshake result for the handler of hub, asking
// the handler once per origin. A handshake cut short because its
// connection went away decides nothing: the next caller asks again.
func (u *upstream) validate(c *wpsConn, hub string) error {
	target := u.url(hub, webpubsub.ValidateEvent)
	key := handlerOrigin(target) + " " + c.origin
	for {
		hs, mine := u.handshakeFor(key)
		if mine {
			u.settle(key, hs, u.handshake(c.ctx, target, c.origin))
		}
		select {
		case <-hs.done:
		case <-c.ctx.Done():
			return errors.New("the connection closed")
		}
		if !errors.Is(hs.err, context.Canceled) {
			return hs.err
		}
		if c.ctx.Err() != nil {
			return hs.err
		}
	}
}

// handshakeFor returns the standing result for key, or a new one the
// caller must settle (mine).
func (u *upstream) handshakeFor(key string) (hs *handshake, mine bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if hs = u.checks[key]; hs != nil {
		select {
		case <-hs.done:
			if hs.expires.IsZero() || time.Now().Before(hs.expires) {
				return hs, false
			}
		default:
			return hs, false // still running
		}
	}
	if len(u.checks) >= maxHandshakes {
		clear(u.checks)
	}
	hs = &handshake{done: make(chan struct{})}
	u.checks[key] = hs
	return hs, true
}

func (u *upstream) settle(key string, hs *handshake, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	hs.err = err
	switch {
	case errors.Is(err, context.Canceled):
		if u.checks[key] == hs {
			delete(u.checks, key)
		}
	case err != nil:
		hs.expires = time.Now().Add(u.retry)
	}
	close(hs.done)
}

// handshake sends the abuse-protection OPTIONS request and checks that
// the answer allows origin. Refusals are worded as the service logs them.
func (u *upstream) handshake(ctx context.Context, target, origin string) error {
	ctx, cancel := context.WithTimeout(ctx, wpsHandshakeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, target, nil)
	if err != nil {
		return fmt.Errorf("Abuse protection for '%s' failed: invalid URL.", redacted(target))
	}
	req.Header = webpubsub.ValidationHeader(origin)
	resp, err := u.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		u.h.metrics.upstream.WithLabelValues("validate", upstreamError).Inc()
		return fmt.Errorf("Abuse protection for '%s' failed: %s.", redacted(target), requestFailure(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, restMaxBody))
	resp.Body.Close()
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		u.h.metrics.upstream.WithLabelValues("validate", upstreamRefused).Inc()
		return fmt.Errorf("Abuse protection for '%s' failed: %d.", redacted(target), resp.StatusCode)
	case !webpubsub.OriginAllowed(resp.Header, origin):
		u.h.metrics.upstream.WithLabelValues("validate", upstreamRefused).Inc()
		return fmt.Errorf("Abuse protection for '%s' missing allowed origins: %s.", redacted(target),
			closeReason(strings.Join(resp.Header.Values(webpubsub.HeaderAllowedOrigin), ",")))
	}
	u.h.metrics.upstream.WithLabelValues("validate", upstreamOK).Inc()
	return nil
}

// handlerOrigin is scheme://host of a handler URL.
func handlerOrigin(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	return u.Scheme + "://" + u.Host
}
