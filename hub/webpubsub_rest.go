package hub

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// wpsAPIVersions are the data-plane api-versions of Web PubSub. Azure
// SignalR Service's REST API has the same /api/hubs/ paths; the
// api-version tells them apart (SignalR's is 2022-06-01).
var wpsAPIVersions = []string{"2021-10-01", "2022-11-01", "2023-07-01", "2024-01-01", webpubsub.APIVersion}

// isWebPubSubREST reports whether r, without an Entra token, is for the
// Web PubSub REST API.
func isWebPubSubREST(r *http.Request) bool {
	return isWebPubSubPath(r.URL.Path) && slices.Contains(wpsAPIVersions, r.URL.Query().Get("api-version"))
}

func isWebPubSubPath(p string) bool { return strings.HasPrefix(p, "/api/hubs/") || p == "/api/health" }

// wpsCall is one REST request being served.
type wpsCall struct {
	w     http.ResponseWriter
	r     *http.Request
	space *wpsSpace
	hub   string   // the hub name as the path spells it
	args  []string // the path segments the route's "*" matched
}

// wpsRoute is one operation: a method and the path after /api/hubs/{hub},
// where "*" matches one segment.
type wpsRoute struct {
	method  string
	pattern []string
	serve   func(*Hub, *wpsCall)
}

var wpsRoutes = []wpsRoute{
	{http.MethodPost, []string{":generateToken"}, (*Hub).wpsGenerateToken},
	{http.MethodPost, []string{":send"}, func(h *Hub, c *wpsCall) { h.wpsRESTSend(c, toAll) }},
	{http.MethodPost, []string{"users", "*", ":send"}, func(h *Hub, c *wpsCall) { h.wpsRESTSend(c, toUser) }},
	{http.MethodPost, []string{"groups", "*", ":send"}, func(h *Hub, c *wpsCall) { h.wpsRESTSend(c, toGroup) }},
	{http.MethodPost, []string{"connections", "*", ":send"}, func(h *Hub, c *wpsCall) { h.wpsRESTSend(c, toConnection) }},
	{http.MethodPut, []string{"groups", "*", "connections", "*"}, (*Hub).wpsAddConnection},
	{http.MethodDelete, []string{"groups", "*", "connections", "*"}, (*Hub).wpsRemoveConnection},
	{http.MethodDelete, []string{"connections", "*", "groups"}, (*Hub).wpsRemoveConnectionFromAll},
	{http.MethodPut, []string{"users", "*", "groups", "*"}, (*Hub).wpsAddUser},
	{http.MethodDelete, []string{"users", "*", "groups", "*"}, (*Hub).wpsRemoveUser},
	{http.MethodDelete, []string{"users", "*", "groups"}, (*Hub).wpsRemoveUser},
	{http.MethodHead, []string{"connections", "*"}, func(h *Hub, c *wpsCall) { h.wpsExists(c, toConnection) }},
	{http.MethodHead, []string{"users", "*"}, func(h *Hub, c *wpsCall) { h.wpsExists(c, toUser) }},
	{http.MethodHead, []string{"groups", "*"}, func(h *Hub, c *wpsCall) { h.wpsExists(c, toGroup) }},
	{http.MethodDelete, []string{"connections", "*"}, func(h *Hub, c *wpsCall) { h.wpsClose(c, toConnection) }},
	{http.MethodPost, []string{":closeConnections"}, func(h *Hub, c *wpsCall) { h.wpsClose(c, toAll) }},
	{http.MethodPost, []string{"groups", "*", ":closeConnections"}, func(h *Hub, c *wpsCall) { h.wpsClose(c, toGroup) }},
	{http.MethodPost, []string{"users", "*", ":closeConnections"}, func(h *Hub, c *wpsCall) { h.wpsClose(c, toUser) }},
	{http.MethodPut, []string{"permissions", "*", "connections", "*"}, (*Hub).wpsPermission},
	{http.MethodDelete, []string{"permissions", "*", "connections", "*"}, (*Hub).wpsPermission},
	{http.MethodHead, []string{"permissions", "*", "connections", "*"}, (*Hub).wpsPermission},
}

// serveWebPubSubREST serves the Web PubSub data-plane REST API. Each
// request carries a token whose aud is its URL, with or without the
// query (the official SDK signs the whole URL).
func (h *Hub) serveWebPubSubREST(w http.ResponseWriter, r *http.Request) {
	escaped := r.URL.EscapedPath()
	if r.URL.Path == "/api/health" {
		w.WriteHeader(http.StatusOK)
		return
	}
	hub, route, args, allow := matchWPSRoute(r.Method, strings.TrimPrefix(escaped, "/api/hubs/"))
	switch {
	case route == nil && allow == "":
		wpsError(w, http.StatusNotFound, "No such operation.")
		return
	case route == nil:
		w.Header().Set("Allow", allow)
		wpsError(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	if err := h.authorizeREST(r, WebPubSubResource, escaped, escaped+"?"+r.URL.RawQuery); err != nil {
		wpsError(w, http.StatusUnauthorized, h.unauthorized(err))
		return
	}
	if !webpubsub.ValidHub(hub) || slices.Contains(args, "") {
		wpsError(w, http.StatusBadRequest, "The hub name, or a user, group or connection id, is not valid.")
		return
	}
	s, ok := h.wpsSpaceNamed(strings.ToLower(hub))
	if !ok {
		wpsError(w, http.StatusServiceUnavailable, "Too many hub names.")
		return
	}
	route.serve(h, &wpsCall{w: w, r: r, space: s, hub: hub, args: args})
}

// matchWPSRoute finds the route for method and the escaped path after
// /api/hubs/. With no route for the method, allow lists the methods the
// path has (empty when it has none).
func matchWPSRoute(method, tail string) (hub string, route *wpsRoute, args []string, allow string) {
	segs := strings.Split(tail, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return "", nil, nil, ""
		}
		segs[i] = u
	}
	var methods []string
	for i := range wpsRoutes {
		rt := &wpsRoutes[i]
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

// wpsError answers with the REST API's error body and header.
func wpsError(w http.ResponseWriter, status int, msg string) {
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

// wpsRESTSend delivers the body as a message from the server: its
// Content-Type gives the data type. 202, or 429 past the rate limit.
func (h *Hub) wpsRESTSend(c *wpsCall, to deliveryTarget) {
	q := c.r.URL.Query()
	if q.Has("filter") {
		wpsError(c.w, http.StatusBadRequest, "The reference hub does not evaluate filter expressions.")
		return
	}
	dt, err := webpubsub.DataTypeForContentType(c.r.Header.Get("Content-Type"))
	if err != nil {
		wpsError(c.w, http.StatusBadRequest, "The Content-Type must be application/json, text/plain or application/octet-stream.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, restMaxBody))
	switch {
	case errors.As(err, new(*http.MaxBytesError)):
		wpsError(c.w, http.StatusRequestEntityTooLarge, "The body is over 1 MiB.")
		return
	case err != nil, dt == webpubsub.DataTypeJSON && !json.Valid(body):
		wpsError(c.w, http.StatusBadRequest, "The body is not valid for its Content-Type.")
		return
	}
	if c.space.limiter != nil && !c.space.limiter.allow(h.now()) {
		h.metrics.throttled.WithLabelValues(throttle.MessageLimit).Inc()
		wpsError(c.w, http.StatusTooManyRequests, throttle.MessageLimitText)
		return
	}
	m := &wpsMessage{frame: webpubsub.Frame{Kind: webpubsub.KindServerMessage, DataType: dt, Data: body}}
	addr := wpsAddress{to: to, excluded: q["excluded"]}
	if to != toAll {
		addr.key = c.args[0]
	}
	if err := h.wpsDeliver(c.space, addr, m); err != nil {
		wpsError(c.w, http.StatusBadRequest, "The body cannot be delivered: "+err.Error())
		return
	}
	c.w.WriteHeader(http.StatusAccepted)
}

// wpsConnection returns a connection of the call's hub by id.
func (h *Hub) wpsConnection(s *wpsSpace, id string) *wpsConn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.conns[id]
}

// wpsAddConnection adds a connection to a group: 200, 404 for a connection
// the hub does not have (as the SDK expects).
func (h *Hub) wpsAddConnection(c *wpsCall) {
	group, id := c.args[0], c.args[1]
	if !validWPSGroup(group) {
		wpsError(c.w, http.StatusBadRequest, "The group name must be 1 to 1024 characters.")
		return
	}
	h.mu.Lock()
	conn := c.space.conns[id]
	if conn != nil {
		h.joinWPSLocked(conn, group)
	}
	h.mu.Unlock()
	if conn == nil {
		wpsError(c.w, http.StatusNotFound, "The connection does not exist.")
		return
	}
	c.w.WriteHeader(http.StatusOK)
}

func (h *Hub) wpsRemoveConnection(c *wpsCall) {
	group, id := c.args[0], c.args[1]
	h.mu.Lock()
	if conn := c.space.conns[id]; conn != nil {
		h.leaveWPSLocked(conn, group)
	}
	h.mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

func (h *Hub) wpsRemoveConnectionFromAll(c *wpsCall) {
	h.mu.Lock()
	if conn := c.space.conns[c.args[0]]; conn != nil {
		for g := range conn.groups {
			h.leaveWPSLocked(conn, g)
		}
	}
	h.mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

// wpsAddUser adds every connection the user has now to a group (200).
func (h *Hub) wpsAddUser(c *wpsCall) {
	user, group := c.args[0], c.args[1]
	if !validWPSGroup(group) {
		wpsError(c.w, http.StatusBadRequest, "The group name must be 1 to 1024 characters.")
		return
	}
	h.mu.Lock()
	for conn := range c.space.users[user] {
		h.joinWPSLocked(conn, group)
	}
	h.mu.Unlock()
	c.w.WriteHeader(http.StatusOK)
}

// wpsRemoveUser takes the user's connections out of one group, or of
// every group when the path names none (204).
func (h *Hub) wpsRemoveUser(c *wpsCall) {
	h.mu.Lock()
	for conn := range c.space.users[c.args[0]] {
		for g := range conn.groups {
			if len(c.args) == 1 || g == c.args[1] {
				h.leaveWPSLocked(conn, g)
			}
		}
	}
	h.mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

// wpsExists answers HEAD for a connection, user or group: 200 when it has
// a connection, else 404.
func (h *Hub) wpsExists(c *wpsCall, what deliveryTarget) {
	h.mu.RLock()
	var found bool
	switch what {
	case toConnection:
		found = c.space.conns[c.args[0]] != nil
	case toUser:
		found = len(c.space.users[c.args[0]]) > 0
	case toGroup:
		found = len(c.space.groups[c.args[0]]) > 0
	}
	h.mu.RUnlock()
	if found {
		c.w.WriteHeader(http.StatusOK)
	} else {
		c.w.WriteHeader(http.StatusNotFound)
	}
}

// wpsClose closes a connection, or every connection of the hub, a group or
// a user but the excluded ones, with the reason given (204).
func (h *Hub) wpsClose(c *wpsCall, to deliveryTarget) {
	q := c.r.URL.Query()
	why := wpsClose{websocket.ClosePolicyViolation, closeReason(q.Get("reason"))}
	if why.reason == "" {
		why.reason = "The connection was closed by the application server."
	}
	addr := wpsAddress{to: to, excluded: q["excluded"]}
	if to != toAll {
		addr.key = c.args[0]
	}
	for _, conn := range h.wpsReceivers(c.space, addr, nil) {
		conn.requestClose(why)
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// wpsPermission grants (PUT, 200), revokes (DELETE, 204) or checks (HEAD,
// 200 or 404) a connection's permission, for the group in targetName or
// for all groups.
func (h *Hub) wpsPermission(c *wpsCall) {
	role, ok := wpsPermissions[c.args[0]]
	if !ok {
		wpsError(c.w, http.StatusBadRequest, "The permission must be sendToGroup or joinLeaveGroup.")
		return
	}
	conn := h.wpsConnection(c.space, c.args[1])
	if conn == nil {
		wpsError(c.w, http.StatusNotFound, "The connection does not exist.")
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
