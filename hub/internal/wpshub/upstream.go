package wpshub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/internal/rawsock"
	"github.com/hubprobe/hubprobe/webpubsub"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	// handshakeTimeout and eventTimeout bound the abuse-protection
	// handshake and one event request.
	handshakeTimeout = 10 * time.Second
	eventTimeout     = 30 * time.Second
	// handshakeRetry is how long a refused handshake stands before the
	// next event tries again; an accepted one stands for good.
	handshakeRetry = 30 * time.Second
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

// NewEventHandlerMetric is the counter of event handler requests, by
// request (validate, event) and result, unregistered; every combination is
// exported from the start.
func NewEventHandlerMetric() *prometheus.CounterVec {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hubprobe_hub_event_handler_requests_total",
		Help: "Requests the embedded hub's Web PubSub emulation sent to its event handler, by request (validate, event) and result (ok, refused, error).",
	}, []string{"request", "result"})
	for _, request := range []string{"validate", "event"} {
		for _, result := range []string{upstreamOK, upstreamRefused, upstreamError} {
			requests.WithLabelValues(request, result)
		}
	}
	return requests
}

// upstream sends user events to the event handler, as the service does:
// CloudEvents in binary mode, each signed with the access key, to a URL
// template whose {hub} and {event} it fills in, after an abuse-protection
// handshake with each handler origin.
type upstream struct {
	template string
	key      string
	client   *http.Client
	requests *prometheus.CounterVec // by request and result
	ids      atomic.Uint64          // ce-id
	retry    time.Duration          // handshakeRetry; shorter in tests

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
func upstreamKey(cfg core.Config) string {
	if cfg.DisableLocalAuth {
		return ""
	}
	return cfg.AccessKey
}

// newUpstream sends the user events of h's clients to the event handler
// URL template, counting its requests into requests.
func newUpstream(h *Hub, template string, requests *prometheus.CounterVec) *upstream {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	tr.DialContext = rawsock.Dialer(tr.DialContext)
	return &upstream{
		template: template,
		key:      upstreamKey(h.Config),
		requests: requests,
		retry:    handshakeRetry,
		checks:   make(map[string]*handshake),
		client: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// CheckEventHandler validates the URL template: http or https, a host, and
// no placeholder but {hub} and {event}.
func CheckEventHandler(template string) error {
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

// userEvent is one user event on its way to the event handler.
type userEvent struct {
	name     string
	dataType webpubsub.DataType
	data     []byte // the event's own copy
	ackID    uint64
	hasAck   bool
}

// raiseEvent sends ev to the event handler on a goroutine of its own; with
// eventsInFlight running, the reader waits for one to finish.
func (c *conn) raiseEvent(ev userEvent) error {
	up := c.hub.events
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
				c.hub.NotePanic(c.log, r)
				c.requestClose(closeInternal)
			}
		}()
		up.deliver(c, ev)
	}()
	return nil
}

// deliver runs one event: handshake, request, answer.
func (u *upstream) deliver(c *conn, ev userEvent) {
	if err := u.validate(c, c.space.Name); err != nil {
		c.eventFailed(ev, err.Error(), false)
		return
	}
	status, contentType, body, err := u.post(c, ev)
	switch {
	case err != nil:
		u.requests.WithLabelValues("event", upstreamError).Inc()
		c.eventFailed(ev, "The event handler did not answer: "+err.Error(), true)
	case status < 200 || status > 299:
		u.requests.WithLabelValues("event", upstreamRefused).Inc()
		c.eventFailed(ev, fmt.Sprintf("The event handler answered %d.", status), true)
	default:
		u.requests.WithLabelValues("event", upstreamOK).Inc()
		c.eventAnswered(ev, contentType, body)
	}
}

// post sends the event and reads the answer.
func (u *upstream) post(c *conn, ev userEvent) (status int, contentType string, body []byte, err error) {
	ctx, cancel := context.WithTimeout(c.ctx, eventTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url(c.space.Name, ev.name), bytes.NewReader(ev.data))
	if err != nil {
		return 0, "", nil, errors.New("the event name makes an invalid URL")
	}
	e := webpubsub.NewUserEvent(c.space.Name, c.id, ev.name, ev.dataType)
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
	body, err = io.ReadAll(io.LimitReader(resp.Body, core.MaxRESTBody+1))
	switch {
	case err != nil:
		return 0, "", nil, errors.New("the answer could not be read")
	case len(body) > core.MaxRESTBody:
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
func (c *conn) eventAnswered(ev userEvent, contentType string, body []byte) {
	if len(body) > 0 {
		dt, err := webpubsub.DataTypeForContentType(contentType)
		if err != nil {
			dt = webpubsub.DataTypeBinary
		}
		m := &message{frame: webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: dt, Data: body}}
		if err := c.hub.deliver(c.space, address{to: core.ToConnection, key: c.id, own: c}, m); err != nil {
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
func (c *conn) eventFailed(ev userEvent, msg string, drop bool) {
	switch {
	case ev.hasAck:
		c.ack(ev.ackID, &webpubsub.AckError{Name: webpubsub.ErrorInvocationFailed, Message: msg})
	case drop:
		c.requestClose(closeCause{code: websocket.ClosePolicyViolation, reason: msg})
	default:
		c.log.Debug().Str("event", ev.name).Str("reason", msg).Msg("event dropped")
	}
}

// validate returns the handshake result for the handler of hub, asking
// the handler once per origin. A handshake cut short because its
// connection went away decides nothing: the next caller asks again.
func (u *upstream) validate(c *conn, hub string) error {
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
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, target, nil)
	if err != nil {
		return fmt.Errorf("Abuse protection for '%s' failed: invalid URL.", redacted(target)) //nolint:staticcheck // the service's own wording
	}
	req.Header = webpubsub.ValidationHeader(origin)
	resp, err := u.client.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		u.requests.WithLabelValues("validate", upstreamError).Inc()
		return fmt.Errorf("Abuse protection for '%s' failed: %s.", redacted(target), requestFailure(err)) //nolint:staticcheck // the service's own wording
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, core.MaxRESTBody))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		u.requests.WithLabelValues("validate", upstreamRefused).Inc()
		return fmt.Errorf("Abuse protection for '%s' failed: %d.", redacted(target), resp.StatusCode) //nolint:staticcheck // the service's own wording
	case !webpubsub.OriginAllowed(resp.Header, origin):
		u.requests.WithLabelValues("validate", upstreamRefused).Inc()
		return fmt.Errorf("Abuse protection for '%s' missing allowed origins: %s.", redacted(target), //nolint:staticcheck // the service's own wording
			closeReason(strings.Join(resp.Header.Values(webpubsub.HeaderAllowedOrigin), ",")))
	}
	u.requests.WithLabelValues("validate", upstreamOK).Inc()
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
