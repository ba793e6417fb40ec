package signalrhub

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
	"github.com/hubprobe/hubprobe/throttle"
)

// restRoute is one parsed REST request: a send (to all, a user, a group or
// a connection) or a group membership change.
type restRoute struct {
	hub      string
	method   string // the method the route wants
	to       core.To
	key      string // user id, group or connection id of a send
	member   bool   // a group membership change (PUT adds, DELETE removes)
	generate bool   // :generateToken
	group    string
	connID   string
	invalid  string // why the request cannot be served (400), if it cannot
}

// serveREST serves Azure SignalR Service's data-plane REST API, v1
// (/api/v1/hubs/{hub}...) and 2022-06-01 (/api/hubs/{hub}/...:send, and
// :generateToken of later versions). Each request carries a token whose
// aud is its URL without the query, or an Entra token (authorizeREST).
func (h *Hub) serveREST(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimRight(r.URL.EscapedPath(), "/")
	route, ok := parseRESTPath(path, r.URL.Query())
	switch {
	case !ok:
		transport.WriteText(w, http.StatusNotFound, "Not found.")
		return
	case route.method != r.Method && !(route.member && r.Method == http.MethodDelete):
		allow := route.method
		if route.member {
			allow = "PUT, DELETE"
		}
		w.Header().Set("Allow", allow)
		transport.WriteText(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	if err := h.AuthorizeREST(r, core.SignalRResource, path); err != nil {
		transport.WriteText(w, http.StatusUnauthorized, h.Unauthorized(err))
		return
	}
	switch {
	case route.invalid != "":
		transport.WriteText(w, http.StatusBadRequest, route.invalid)
		return
	case route.generate:
		h.generateToken(w, r, route.hub)
		return
	}
	s, ok := h.spaces.Named(route.hub)
	switch {
	case !ok:
		transport.WriteText(w, http.StatusServiceUnavailable, core.TooManySpacesText)
	case route.member:
		h.changeMembership(w, r, s, route)
	default:
		h.restSend(w, r, s, route)
	}
}

// parseRESTPath maps an escaped path to its route; ok is false for paths
// the API does not have.
func parseRESTPath(path string, q url.Values) (restRoute, bool) {
	var route restRoute
	var rest []string
	switch segs := strings.Split(path, "/"); {
	case len(segs) >= 5 && segs[1] == "api" && segs[2] == "v1" && segs[3] == "hubs":
		route.hub, rest = segs[4], segs[5:]
	case len(segs) >= 4 && segs[1] == "api" && segs[2] == "hubs":
		route.hub, rest = segs[3], segs[4:]
		switch {
		case len(rest) == 1 && rest[0] == ":generateToken":
			route.generate, rest = true, nil
		case len(rest) > 0 && rest[len(rest)-1] == ":send":
			rest = rest[:len(rest)-1]
		case !isMembershipPath(rest):
			return route, false
		}
		if q.Get("api-version") == "" {
			route.invalid = "The api-version query parameter is required."
		}
	default:
		return route, false
	}
	for i, s := range rest {
		u, err := url.PathUnescape(s)
		if err != nil {
			return route, false
		}
		rest[i] = u
	}
	if !routeTail(&route, rest) {
		return route, false
	}
	if !ValidHubName(route.hub) {
		route.invalid = "The hub name must start with a letter and hold only letters, digits or '_'."
	}
	route.hub = strings.ToLower(route.hub)
	return route, true
}

func isMembershipPath(rest []string) bool {
	return len(rest) == 4 && (rest[0] == "groups" && rest[2] == "connections" || rest[0] == "connections" && rest[2] == "groups")
}

// routeTail reads what follows the hub name.
func routeTail(route *restRoute, rest []string) bool {
	route.method = http.MethodPost
	switch {
	case len(rest) == 0:
		route.to = core.ToAll
	case len(rest) == 2 && rest[0] == "users":
		route.to, route.key = core.ToUser, rest[1]
	case len(rest) == 2 && rest[0] == "groups":
		route.to, route.key = core.ToGroup, rest[1]
	case len(rest) == 2 && rest[0] == "connections":
		route.to, route.key = core.ToConnection, rest[1]
	case isMembershipPath(rest) && rest[0] == "groups":
		route.member, route.method, route.group, route.connID = true, http.MethodPut, rest[1], rest[3]
	case isMembershipPath(rest):
		route.member, route.method, route.group, route.connID = true, http.MethodPut, rest[3], rest[1]
	default:
		return false
	}
	if route.key == "" && !route.member && route.to != core.ToAll || route.member && (route.group == "" || route.connID == "") {
		route.invalid = "The user, group or connection id is empty."
	}
	return true
}

type restMessage struct {
	Target    string            `json:"target"`
	Arguments []json.RawMessage `json:"arguments"`
}

// restSend delivers {"target","arguments"} as an Invocation to the
// addressed connections of the hub name and answers 202, or 429 past the
// message rate limit.
func (h *Hub) restSend(w http.ResponseWriter, r *http.Request, s *space, route restRoute) {
	msg, err := readRESTMessage(w, r)
	if err != nil {
		status := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		transport.WriteText(w, status, "The body is not a message: "+err.Error())
		return
	}
	if !h.WithinRate(s.Limiter) {
		transport.WriteText(w, http.StatusTooManyRequests, throttle.MessageLimitText)
		return
	}
	h.deliver(delivery{
		to:       route.to,
		space:    s,
		key:      route.key,
		excluded: r.URL.Query()["excluded"],
		msg:      signalr.Message{Type: signalr.InvocationType, Target: msg.Target, Arguments: msg.Arguments},
	})
	w.WriteHeader(http.StatusAccepted)
}

func readRESTMessage(w http.ResponseWriter, r *http.Request) (restMessage, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, core.MaxRESTBody))
	if err != nil {
		return restMessage{}, err
	}
	var m restMessage // field names match case-insensitively: {"Target",...} too
	if err := json.Unmarshal(body, &m); err != nil {
		return restMessage{}, errors.New("invalid JSON")
	}
	if m.Target == "" {
		return restMessage{}, errors.New("no target")
	}
	if m.Arguments == nil {
		m.Arguments = []json.RawMessage{}
	}
	return m, nil
}

// changeMembership adds (PUT) or removes (DELETE) a connection of the hub
// name to or from a group: 200, or 404 for a connection it does not have.
func (h *Hub) changeMembership(w http.ResponseWriter, r *http.Request, s *space, route restRoute) {
	h.Mu.RLock()
	c := s.Conns[route.connID]
	h.Mu.RUnlock()
	if c == nil {
		transport.WriteText(w, http.StatusNotFound, "The connection does not exist.")
		return
	}
	if r.Method == http.MethodPut {
		h.addToGroup(c, route.group)
	} else {
		h.removeFromGroup(c, route.group)
	}
	w.WriteHeader(http.StatusOK)
}

// generateToken answers :generateToken with a token for the client
// endpoint of hub (already lower-cased), nameid userId.
func (h *Hub) generateToken(w http.ResponseWriter, r *http.Request, hub string) {
	req, invalid := core.ParseTokenRequest(r.URL.Query())
	if invalid != "" {
		transport.WriteText(w, http.StatusBadRequest, invalid)
		return
	}
	claims := azure.TokenClaims{Audience: core.RequestOrigins(r)[0] + "/client/?hub=" + url.QueryEscape(hub), UserID: req.UserID}
	h.AnswerClientToken(w, claims, req.TTL, transport.WriteText)
}
