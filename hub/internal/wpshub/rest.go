package wpshub

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// apiVersions are the data-plane api-versions of Web PubSub. Azure
// SignalR Service's REST API has the same /api/hubs/ paths; the
// api-version tells them apart (SignalR's is 2022-06-01).
var apiVersions = []string{"2021-10-01", "2022-11-01", "2023-07-01", "2024-01-01", webpubsub.APIVersion}

// isRESTPath reports whether p is a path of the Web PubSub REST API.
func isRESTPath(p string) bool { return strings.HasPrefix(p, "/api/hubs/") || p == "/api/health" }

// call is one REST request being served.
type call struct {
	w     http.ResponseWriter
	r     *http.Request
	space *space
	hub   string   // the hub name as the path spells it
	args  []string // the path segments the route's "*" matched
}

// route is one operation: a method and the path after /api/hubs/{hub},
// where "*" matches one segment.
type route struct {
	method  string
	pattern []string
	serve   func(*Hub, *call)
}

var routes = []route{
	{http.MethodPost, []string{":generateToken"}, (*Hub).generateToken},
	{http.MethodPost, []string{":send"}, func(h *Hub, c *call) { h.restSend(c, core.ToAll) }},
	{http.MethodPost, []string{"users", "*", ":send"}, func(h *Hub, c *call) { h.restSend(c, core.ToUser) }},
	{http.MethodPost, []string{"groups", "*", ":send"}, func(h *Hub, c *call) { h.restSend(c, core.ToGroup) }},
	{http.MethodPost, []string{"connections", "*", ":send"}, func(h *Hub, c *call) { h.restSend(c, core.ToConnection) }},
	{http.MethodPut, []string{"groups", "*", "connections", "*"}, (*Hub).addConnection},
	{http.MethodDelete, []string{"groups", "*", "connections", "*"}, (*Hub).removeConnection},
	{http.MethodDelete, []string{"connections", "*", "groups"}, (*Hub).removeConnectionFromAll},
	{http.MethodPut, []string{"users", "*", "groups", "*"}, (*Hub).addUser},
	{http.MethodDelete, []string{"users", "*", "groups", "*"}, (*Hub).removeUser},
	{http.MethodDelete, []string{"users", "*", "groups"}, (*Hub).removeUser},
	{http.MethodHead, []string{"connections", "*"}, func(h *Hub, c *call) { h.exists(c, core.ToConnection) }},
	{http.MethodHead, []string{"users", "*"}, func(h *Hub, c *call) { h.exists(c, core.ToUser) }},
	{http.MethodHead, []string{"groups", "*"}, func(h *Hub, c *call) { h.exists(c, core.ToGroup) }},
	{http.MethodDelete, []string{"connections", "*"}, func(h *Hub, c *call) { h.closeConnections(c, core.ToConnection) }},
	{http.MethodPost, []string{":closeConnections"}, func(h *Hub, c *call) { h.closeConnections(c, core.ToAll) }},
	{http.MethodPost, []string{"groups", "*", ":closeConnections"}, func(h *Hub, c *call) { h.closeConnections(c, core.ToGroup) }},
	{http.MethodPost, []string{"users", "*", ":closeConnections"}, func(h *Hub, c *call) { h.closeConnections(c, core.ToUser) }},
	{http.MethodPut, []string{"permissions", "*", "connections", "*"}, (*Hub).permission},
	{http.MethodDelete, []string{"permissions", "*", "connections", "*"}, (*Hub).permission},
	{http.MethodHead, []string{"permissions", "*", "connections", "*"}, (*Hub).permission},
}

// serveREST serves the Web PubSub data-plane REST API. Each
// request carries a token whose aud is its URL, with or without the
// query (the official SDK signs the whole URL).
func (h *Hub) serveREST(w http.ResponseWriter, r *http.Request) {
	escaped := r.URL.EscapedPath()
	if r.URL.Path == "/api/health" {
		w.WriteHeader(http.StatusOK)
		return
	}
	hub, route, args, allow := matchRoute(r.Method, strings.TrimPrefix(escaped, "/api/hubs/"))
	switch {
	case route == nil && allow == "":
		restError(w, http.StatusNotFound, "No such operation.")
		return
	case route == nil:
		w.Header().Set("Allow", allow)
		restError(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	if err := h.AuthorizeREST(r, core.WebPubSubResource, escaped, escaped+"?"+r.URL.RawQuery); err != nil {
		restError(w, http.StatusUnauthorized, h.Unauthorized(err))
		return
	}
	if !webpubsub.ValidHub(hub) || slices.Contains(args, "") {
		restError(w, http.StatusBadRequest, "The hub name, or a user, group or connection id, is not valid.")
		return
	}
	s, ok := h.spaces.Named(strings.ToLower(hub))
	if !ok {
		restError(w, http.StatusServiceUnavailable, core.TooManySpacesText)
		return
	}
	route.serve(h, &call{w: w, r: r, space: s, hub: hub, args: args})
}

// matchRoute finds the route for method and the escaped path after
// /api/hubs/. With no route for the method, allow lists the methods the
// path has (empty when it has none).
func matchRoute(method, tail string) (hub string, route *route, args []string, allow string) {
	segs := strings.Split(tail, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return "", nil, nil, ""
		}
		segs[i] = u
	}
	var methods []string
	for i := range routes {
		rt := &routes[i]
		matched, ok := matchPattern(rt.pattern, segs[1:])
		if !ok {
			continue
		}
		if rt.method == method {
			return segs[0], rt, matched, ""
		}
		methods = append(methods, rt.method)
	}
	return "", nil, nil, strings.Join(methods, ", ")
}

func matchPattern(pattern, segs []string) ([]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var args []string
	for i, p := range pattern {
		switch {
		case p == "*":
			args = append(args, segs[i])
		case p != segs[i]:
			return nil, false
		}
	}
	return args, true
}

// restError answers with the REST API's error body and header.
func restError(w http.ResponseWriter, status int, msg string) {
	code := strings.ReplaceAll(http.StatusText(status), " ", "")
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// restSend delivers the body as a message from the server: its
// Content-Type gives the data type. 202, or 429 past the rate limit.
func (h *Hub) restSend(c *call, to core.To) {
	q := c.r.URL.Query()
	if q.Has("filter") {
		restError(c.w, http.StatusBadRequest, "The reference hub does not evaluate filter expressions.")
		return
	}
	dt, err := webpubsub.DataTypeForContentType(c.r.Header.Get("Content-Type"))
	if err != nil {
		restError(c.w, http.StatusBadRequest, "The Content-Type must be application/json, text/plain or application/octet-stream.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, core.MaxRESTBody))
	switch {
	case errors.As(err, new(*http.MaxBytesError)):
		restError(c.w, http.StatusRequestEntityTooLarge, "The body is over 1 MiB.")
		return
	case err != nil, dt == webpubsub.DataTypeJSON && !json.Valid(body):
		restError(c.w, http.StatusBadRequest, "The body is not valid for its Content-Type.")
		return
	}
	if !h.WithinRate(c.space.Limiter) {
		restError(c.w, http.StatusTooManyRequests, throttle.MessageLimitText)
		return
	}
	m := &message{frame: webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: dt, Data: body}}
	addr := address{to: to, excluded: q["excluded"]}
	if to != core.ToAll {
		addr.key = c.args[0]
	}
	if err := h.deliver(c.space, addr, m); err != nil {
		restError(c.w, http.StatusBadRequest, "The body cannot be delivered: "+err.Error())
		return
	}
	c.w.WriteHeader(http.StatusAccepted)
}

// connection returns a connection of the call's hub by id.
func (h *Hub) connection(s *space, id string) *conn {
	h.Mu.RLock()
	defer h.Mu.RUnlock()
	return s.Conns[id]
}

// addConnection adds a connection to a group: 200, 404 for a connection
// the hub does not have (as the SDK expects).
func (h *Hub) addConnection(c *call) {
	group, id := c.args[0], c.args[1]
	if !validGroup(group) {
		restError(c.w, http.StatusBadRequest, "The group name must be 1 to 1024 characters.")
		return
	}
	h.Mu.Lock()
	conn := c.space.Conns[id]
	if conn != nil {
		h.joinLocked(conn, group)
	}
	h.Mu.Unlock()
	if conn == nil {
		restError(c.w, http.StatusNotFound, "The connection does not exist.")
		return
	}
	c.w.WriteHeader(http.StatusOK)
}

func (h *Hub) removeConnection(c *call) {
	group, id := c.args[0], c.args[1]
	h.Mu.Lock()
	if conn := c.space.Conns[id]; conn != nil {
		h.leaveLocked(conn, group)
	}
	h.Mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

func (h *Hub) removeConnectionFromAll(c *call) {
	h.Mu.Lock()
	if conn := c.space.Conns[c.args[0]]; conn != nil {
		for g := range conn.groups {
			h.leaveLocked(conn, g)
		}
	}
	h.Mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

// addUser adds every connection the user has now to a group (200).
func (h *Hub) addUser(c *call) {
	user, group := c.args[0], c.args[1]
	if !validGroup(group) {
		restError(c.w, http.StatusBadRequest, "The group name must be 1 to 1024 characters.")
		return
	}
	h.Mu.Lock()
	for conn := range c.space.Users[user] {
		h.joinLocked(conn, group)
	}
	h.Mu.Unlock()
	c.w.WriteHeader(http.StatusOK)
}

// removeUser takes the user's connections out of one group, or of
// every group when the path names none (204).
func (h *Hub) removeUser(c *call) {
	h.Mu.Lock()
	for conn := range c.space.Users[c.args[0]] {
		for g := range conn.groups {
			if len(c.args) == 1 || g == c.args[1] {
				h.leaveLocked(conn, g)
			}
		}
	}
	h.Mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

// exists answers HEAD for a connection, user or group: 200 when it has
// a connection, else 404.
func (h *Hub) exists(c *call, what core.To) {
	h.Mu.RLock()
	var found bool
	switch what {
	case core.ToConnection:
		found = c.space.Conns[c.args[0]] != nil
	case core.ToUser:
		found = len(c.space.Users[c.args[0]]) > 0
	case core.ToGroup:
		found = len(c.space.Groups[c.args[0]]) > 0
	}
	h.Mu.RUnlock()
	if found {
		c.w.WriteHeader(http.StatusOK)
	} else {
		c.w.WriteHeader(http.StatusNotFound)
	}
}

// closeConnections closes a connection, or every connection of the hub, a group or
// a user but the excluded ones, with the reason given (204).
func (h *Hub) closeConnections(c *call, to core.To) {
	q := c.r.URL.Query()
	why := closeCause{code: websocket.ClosePolicyViolation, reason: closeReason(q.Get("reason"))}
	if why.reason == "" {
		why.reason = "The connection was closed by the application server."
	}
	addr := address{to: to, excluded: q["excluded"]}
	if to != core.ToAll {
		addr.key = c.args[0]
	}
	for _, conn := range h.receivers(c.space, addr, nil) {
		conn.requestClose(why)
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// permission grants (PUT, 200), revokes (DELETE, 204) or checks (HEAD,
// 200 or 404) a connection's permission, for the group in targetName or
// for all groups.
func (h *Hub) permission(c *call) {
	role, ok := permissionRoles[c.args[0]]
	if !ok {
		restError(c.w, http.StatusBadRequest, "The permission must be sendToGroup or joinLeaveGroup.")
		return
	}
	conn := h.connection(c.space, c.args[1])
	if conn == nil {
		restError(c.w, http.StatusNotFound, "The connection does not exist.")
		return
	}
	group := c.r.URL.Query().Get("targetName")
	switch c.r.Method {
	case http.MethodPut:
		conn.roles.grant(role, group)
		c.w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		conn.roles.revoke(role, group)
		c.w.WriteHeader(http.StatusNoContent)
	case http.MethodHead:
		if (group == "" && conn.roles.has(role, "")) || (group != "" && conn.roles.allows(role, group)) {
			c.w.WriteHeader(http.StatusOK)
		} else {
			c.w.WriteHeader(http.StatusNotFound)
		}
	}
}

// generateToken answers :generateToken with a token for /client/hubs/{hub}
// as the path spells hub (the client connects to the same spelling), sub
// userId, with the roles and groups asked for.
func (h *Hub) generateToken(c *call) {
	req, invalid := parseTokenRequest(c.r.URL.Query())
	if invalid != "" {
		restError(c.w, http.StatusBadRequest, invalid)
		return
	}
	claims := azure.TokenClaims{
		Audience: core.RequestOrigins(c.r)[0] + clientPath + url.PathEscape(c.hub),
		Subject:  req.UserID, Roles: req.roles, Groups: req.groups,
	}
	h.AnswerClientToken(c.w, claims, req.TTL, restError)
}
