package webpubsub

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// CloudEvents request headers the service sends to an event handler
// (binary mode: attributes in ce-* headers, data in the body). Go's
// canonical forms; HTTP header names are case-insensitive.
const (
	HeaderSpecVersion     = "Ce-Specversion"
	HeaderType            = "Ce-Type"
	HeaderSource          = "Ce-Source"
	HeaderID              = "Ce-Id"
	HeaderTime            = "Ce-Time"
	HeaderAWPSVersion     = "Ce-Awpsversion"
	HeaderHub             = "Ce-Hub"
	HeaderEventName       = "Ce-Eventname"
	HeaderConnectionID    = "Ce-Connectionid"
	HeaderUserID          = "Ce-Userid"
	HeaderSubprotocol     = "Ce-Subprotocol"
	HeaderConnectionState = "Ce-Connectionstate"
	HeaderSignature       = "Ce-Signature"
)

// Event type prefixes and the system events.
const (
	UserTypePrefix    = "azure.webpubsub.user."
	SystemTypePrefix  = "azure.webpubsub.sys."
	EventConnect      = "connect"
	EventConnected    = "connected"
	EventDisconnected = "disconnected"
	// EventMessage is the user event a simple (no subprotocol) client's
	// every frame raises.
	EventMessage = "message"
)

// Versions the service puts in ce-specversion and ce-awpsversion.
const (
	SpecVersion = "1.0"
	AWPSVersion = "1.0"
)

var (
	// ErrNotWebPubSub is a request that lacks ce-awpsversion or
	// WebHook-Request-Origin, the headers both official SDKs use to tell a
	// Web PubSub request from other traffic.
	ErrNotWebPubSub = errors.New("webpubsub: not a Web PubSub event request")
	// ErrInvalidEvent is wrapped by every other ParseCloudEvent error.
	ErrInvalidEvent = errors.New("webpubsub: invalid event request")
)

// CloudEvent holds the attributes of one event request. The body (the
// client's data for a user event, JSON for a system event) is the caller's
// to read.
type CloudEvent struct {
	SpecVersion     string
	Type            string // azure.webpubsub.user.<event> or azure.webpubsub.sys.<event>
	Source          string // /hubs/{hub}/client/{connectionId}
	ID              string
	Time            string
	AWPSVersion     string
	Hub             string
	EventName       string
	ConnectionID    string
	UserID          string
	Subprotocol     string
	ConnectionState string
	// Signature is ce-signature, several header lines joined by commas.
	Signature string
	// Origin is WebHook-Request-Origin, the service's host name.
	Origin string
	// DataType is the body's data type; system events are JSON.
	DataType DataType
}

// IsUserEvent reports whether the event carries a client's data (a custom
// event or a simple client's message) rather than a connection event.
func (e *CloudEvent) IsUserEvent() bool { return strings.HasPrefix(e.Type, UserTypePrefix) }

// ParseCloudEvent reads and checks the attributes of an event request.
// Errors quote at most a short prefix of a header and never the signature
// or the connection state.
func ParseCloudEvent(h http.Header) (*CloudEvent, error) {
	e := &CloudEvent{
		AWPSVersion: h.Get(HeaderAWPSVersion),
		Origin:      h.Get(HeaderRequestOrigin),
	}
	if e.AWPSVersion == "" || e.Origin == "" {
		return nil, ErrNotWebPubSub
	}
	e.SpecVersion, e.Type, e.Source = h.Get(HeaderSpecVersion), h.Get(HeaderType), h.Get(HeaderSource)
	e.ID, e.Time, e.Hub = h.Get(HeaderID), h.Get(HeaderTime), h.Get(HeaderHub)
	e.EventName, e.ConnectionID, e.UserID = h.Get(HeaderEventName), h.Get(HeaderConnectionID), h.Get(HeaderUserID)
	e.Subprotocol, e.ConnectionState = h.Get(HeaderSubprotocol), h.Get(HeaderConnectionState)
	e.Signature = strings.Join(h.Values(HeaderSignature), ",")
	if err := e.check(); err != nil {
		return nil, err
	}
	if !e.IsUserEvent() {
		return e, nil
	}
	contentType := h.Get("Content-Type")
	if contentType == "" {
		return nil, fmt.Errorf("%w: no Content-Type header", ErrInvalidEvent)
	}
	dataType, err := dataTypeFor(contentType)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
	}
	e.DataType = dataType
	return e, nil
}

func (e *CloudEvent) check() error {
	for _, a := range [...]struct{ value, header string }{
		{e.SpecVersion, HeaderSpecVersion}, {e.Type, HeaderType}, {e.Source, HeaderSource},
		{e.ID, HeaderID}, {e.Hub, HeaderHub}, {e.EventName, HeaderEventName},
		{e.ConnectionID, HeaderConnectionID},
	} {
		if a.value == "" {
			return fmt.Errorf("%w: no %s header", ErrInvalidEvent, a.header)
		}
	}
	if e.SpecVersion != SpecVersion {
		return fmt.Errorf("%w: %s %s is not %q", ErrInvalidEvent, HeaderSpecVersion, quoteLimited(e.SpecVersion), SpecVersion)
	}
	name, ok := eventNameOf(e.Type)
	if !ok {
		return fmt.Errorf("%w: %s %s is not a Web PubSub event type", ErrInvalidEvent, HeaderType, quoteLimited(e.Type))
	}
	if name != e.EventName {
		return fmt.Errorf("%w: %s %s does not match %s %s", ErrInvalidEvent,
			HeaderEventName, quoteLimited(e.EventName), HeaderType, quoteLimited(e.Type))
	}
	return nil
}

// eventNameOf returns the event name a ce-type names: any name after the
// user prefix, one of the three system events after the system prefix.
func eventNameOf(ceType string) (string, bool) {
	if name, ok := strings.CutPrefix(ceType, UserTypePrefix); ok {
		return name, name != ""
	}
	name, ok := strings.CutPrefix(ceType, SystemTypePrefix)
	switch {
	case !ok:
		return "", false
	case name == EventConnect, name == EventConnected, name == EventDisconnected:
		return name, true
	}
	return "", false
}

// NewUserEvent returns the attributes of a user event from connectionID in
// hub, as the service sets them; the caller adds ID, Time, UserID, Origin,
// Subprotocol, ConnectionState and Signature.
func NewUserEvent(hub, connectionID, event string, dataType DataType) *CloudEvent {
	e := newEvent(hub, connectionID, UserTypePrefix, event)
	e.DataType = dataType
	return e
}

func newEvent(hub, connectionID, prefix, event string) *CloudEvent {
	return &CloudEvent{
		SpecVersion:  SpecVersion,
		AWPSVersion:  AWPSVersion,
		Type:         prefix + event,
		Source:       "/hubs/" + hub + "/client/" + connectionID,
		Hub:          hub,
		EventName:    event,
		ConnectionID: connectionID,
	}
}

// WriteHeader sets e's attributes, WebHook-Request-Origin and the
// Content-Type of its body on h, leaving out attributes that are empty.
func (e *CloudEvent) WriteHeader(h http.Header) {
	for _, a := range [...]struct{ header, value string }{
		{HeaderRequestOrigin, e.Origin}, {HeaderSpecVersion, e.SpecVersion}, {HeaderAWPSVersion, e.AWPSVersion},
		{HeaderType, e.Type}, {HeaderSource, e.Source}, {HeaderID, e.ID}, {HeaderTime, e.Time},
		{HeaderHub, e.Hub}, {HeaderEventName, e.EventName}, {HeaderConnectionID, e.ConnectionID},
		{HeaderUserID, e.UserID}, {HeaderSubprotocol, e.Subprotocol},
		{HeaderConnectionState, e.ConnectionState}, {HeaderSignature, e.Signature},
	} {
		if a.value != "" {
			h.Set(a.header, a.value)
		}
	}
	if e.IsUserEvent() {
		h.Set("Content-Type", e.DataType.ContentType())
	} else {
		h.Set("Content-Type", ContentTypeJSON+"; charset=utf-8")
	}
}
