package webpubsub

import (
	"errors"
	"net/http"
	"strings"
)

// Headers of the CloudEvents abuse-protection handshake: the service sends
// an OPTIONS request with WebHook-Request-Origin and accepts the handler
// only when the answer carries WebHook-Allowed-Origin.
const (
	HeaderRequestOrigin = "Webhook-Request-Origin"
	HeaderAllowedOrigin = "Webhook-Allowed-Origin"
)

// ValidateEvent is what the service puts for {event} in an event handler
// URL template when it sends the handshake.
const ValidateEvent = "validate"

var (
	// ErrNoRequestOrigin is a handshake without WebHook-Request-Origin.
	ErrNoRequestOrigin = errors.New("webpubsub: abuse protection: no WebHook-Request-Origin header")
	// ErrOriginNotAllowed is a handshake none of whose requesting origins is allowed.
	ErrOriginNotAllowed = errors.New("webpubsub: abuse protection: origin not allowed")
)

// origins returns the origins of a header that may repeat and may list
// several comma-separated values.
func origins(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for o := range strings.SplitSeq(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				out = append(out, o)
			}
		}
	}
	return out
}

// AllowOrigin answers a handshake request: the WebHook-Allowed-Origin value
// to return. With no allowed hosts every origin is allowed and the answer
// is "*", as the official handlers do by default; otherwise it is the first
// requesting origin that matches an allowed host (case-insensitively).
func AllowOrigin(h http.Header, allowed []string) (string, error) {
	requested := origins(h, HeaderRequestOrigin)
	if len(requested) == 0 {
		return "", ErrNoRequestOrigin
	}
	if len(allowed) == 0 {
		return "*", nil
	}
	for _, o := range requested {
		for _, a := range allowed {
			if strings.EqualFold(o, a) {
				return o, nil
			}
		}
	}
	return "", ErrOriginNotAllowed
}

// OriginAllowed is the service's side of the handshake: whether the
// handler's response headers grant origin, by "*" or by naming it.
func OriginAllowed(h http.Header, origin string) bool {
	for _, o := range origins(h, HeaderAllowedOrigin) {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// ValidationHeader is the header of the handshake request the service
// sends from origin (its host name).
func ValidationHeader(origin string) http.Header {
	h := http.Header{}
	h.Set(HeaderRequestOrigin, origin)
	h.Set(HeaderAWPSVersion, AWPSVersion)
	return h
}
