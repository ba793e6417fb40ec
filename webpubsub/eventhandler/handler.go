// Package eventhandler is the Azure Web PubSub event handler hubprobe
// serves for the upstream echo: the service posts each client event as a
// CloudEvents request, and the handler answers with the same data, which
// the service delivers back to the client as a message from the server.
//
// It answers as the official @azure/web-pubsub-express handler does for
// a hub with only a user-event handler: the abuse-protection OPTIONS
// handshake with WebHook-Allowed-Origin: *, user events with 200 and the
// data in the Content-Type express writes, connect, connected and
// disconnected with an empty 200, and anything that is not a Web PubSub
// request for one of its hubs with 404. Unlike express, which never
// checks ce-signature, it refuses a request whose signature does not
// match the hub's access key with 401, as the ASP.NET Core handler does.
package eventhandler

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// Paths. The service is given the URL template
// <hubprobe's address>/webpubsub/{hub}/events; anything after /events
// (an /{event} the template may add) is accepted as well.
const (
	// Prefix is what a mux routes to the handler.
	Prefix = "/webpubsub/"
	// eventsSegment ends the path of one hub.
	eventsSegment = "/events"
	// PathTemplate is the path part of the URL template, {hub} as the
	// service writes it.
	PathTemplate = Prefix + "{hub}" + eventsSegment
)

// MaxBodySize bounds a request body: the service's own limit on one
// message is 1 MB.
const MaxBodySize = 1 << 20

// Options configure a Handler.
type Options struct {
	// Delay holds back every user event's answer for this long. It exists
	// for tests that measure the upstream echo against a slow handler.
	Delay time.Duration
	// Logger is told why a request was refused; the zero value logs
	// nothing. Signatures, keys and bodies are never logged.
	Logger zerolog.Logger
	// Observer, when set, is told of every answer.
	Observer Observer
}

// Observer is told what the handler answered to each request: the event
// (one of the Event* values, never a name from the request) and the
// status code. It must be safe for concurrent use.
type Observer interface {
	EventAnswered(event string, code int)
}

// What an Observer is told a request was: the handshake, a system event,
// a user event, or something else (not a Web PubSub request, another
// method).
const (
	EventValidate     = "validate"
	EventConnect      = "connect"
	EventConnected    = "connected"
	EventDisconnected = "disconnected"
	EventUser         = "user"
	EventOther        = "other"
)

// Handler is the event handler. It is safe for concurrent use; SetHubs
// may be called while it serves.
type Handler struct {
	opts Options
	hubs atomic.Pointer[map[string][]string] // lower-cased hub name → access keys
}

// New returns a handler that serves no hub until SetHubs.
func New(opts Options) *Handler {
	h := &Handler{opts: opts}
	h.SetHubs(nil)
	return h
}

// SetHubs replaces the hubs the handler serves: each hub name (matched
// case-insensitively, as the service does) with the access keys a
// request's ce-signature may be made with. Several targets on one hub
// name each add their key.
func (h *Handler) SetHubs(hubs map[string][]string) {
	m := make(map[string][]string, len(hubs))
	for name, keys := range hubs {
		lower := strings.ToLower(name)
		m[lower] = append(m[lower], keys...)
	}
	h.hubs.Store(&m)
}

// keys returns the access keys of hub, and whether the handler serves it.
func (h *Handler) keys(hub string) ([]string, bool) {
	keys, ok := (*h.hubs.Load())[strings.ToLower(hub)]
	return keys, ok
}

// URL is the event handler URL template to give the service, for a
// handler served at base (scheme, host and port, no path).
func URL(base string) string { return strings.TrimSuffix(base, "/") + PathTemplate }

// hubOf returns the hub name of a request path, /webpubsub/{hub}/events
// with an optional tail.
func hubOf(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return "", false
	}
	hub, tail, ok := strings.Cut(rest, "/")
	if !ok || hub == "" || !strings.HasPrefix("/"+tail+"/", eventsSegment+"/") {
		return "", false
	}
	return hub, true
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.opts.Observer == nil {
		h.serve(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	h.serve(sw, r)
	h.opts.Observer.EventAnswered(eventOf(r), sw.code)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	hub, ok := hubOf(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	keys, served := h.keys(hub)
	if !served {
		h.refuse(w, http.StatusNotFound, "", "no Web PubSub target has this hub", hub)
		return
	}
	switch r.Method {
	case http.MethodOptions:
		h.handshake(w, r, hub)
	case http.MethodPost:
		h.event(w, r, hub, keys)
	default:
		w.Header().Set("Allow", "OPTIONS, POST")
		h.refuse(w, http.StatusMethodNotAllowed, "", "method "+r.Method, hub)
	}
}

// refuse answers with code and an optional body, and logs why at debug
// level: a misconfigured service retries, and must not flood the log.
func (h *Handler) refuse(w http.ResponseWriter, code int, body, why, hub string) {
	h.opts.Logger.Debug().Int("code", code).Str("hub", limit(hub)).Str("why", why).Msg("Web PubSub event request refused")
	if body != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// limit cuts a name from a request before it is logged.
func limit(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}

// statusWriter remembers the status code of an answer.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// eventOf names a request for the Observer from its method and ce-type.
func eventOf(r *http.Request) string {
	if r.Method == http.MethodOptions {
		return EventValidate
	}
	if r.Method != http.MethodPost {
		return EventOther
	}
	ceType := r.Header.Get(webpubsub.HeaderType)
	if strings.HasPrefix(ceType, webpubsub.UserTypePrefix) {
		return EventUser
	}
	name, system := strings.CutPrefix(ceType, webpubsub.SystemTypePrefix)
	if !system {
		return EventOther // not a Web PubSub type
	}
	switch name {
	case webpubsub.EventConnect:
		return EventConnect
	case webpubsub.EventConnected:
		return EventConnected
	case webpubsub.EventDisconnected:
		return EventDisconnected
	}
	return EventOther
}
