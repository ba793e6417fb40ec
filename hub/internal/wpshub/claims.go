package wpshub

import (
	"errors"
	"net/url"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hubprobe/hubprobe/hub/internal/core"
)

// Roles a Web PubSub client token grants. Without one a client may only
// send events; a ".<group>" suffix limits a role to one group.
const (
	roleJoinLeaveGroup = "webpubsub.joinLeaveGroup"
	roleSendToGroup    = "webpubsub.sendToGroup"
)

// Permission names of the REST API's permission operations, and the role
// each grants.
var permissionRoles = map[string]string{
	"joinLeaveGroup": roleJoinLeaveGroup,
	"sendToGroup":    roleSendToGroup,
}

// maxTokenRoles bounds the roles and groups one token may carry; the
// service refuses tokens over 4 KB, which holds far fewer.
const maxTokenRoles = 256

// clientClaims are what a verified client token says about the connection:
// sub is the user id, role the permissions, webpubsub.group the groups
// joined on connect.
type clientClaims struct {
	UserID string           `json:"sub"`
	Roles  jwt.ClaimStrings `json:"role"`
	Groups jwt.ClaimStrings `json:"webpubsub.group"`
}

// The claims interface golang-jwt wants; VerifyToken has already checked
// the registered claims.
func (c *clientClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (c *clientClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return nil, nil }
func (c *clientClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *clientClaims) GetIssuer() (string, error)                   { return "", nil }
func (c *clientClaims) GetSubject() (string, error)                  { return c.UserID, nil }
func (c *clientClaims) GetAudience() (jwt.ClaimStrings, error)       { return nil, nil }

// parseClaims reads the Web PubSub claims of a token azure.VerifyToken
// accepted (so its signature is checked: parsing it again unverified only
// reads what VerifyToken does not return).
func parseClaims(token string) (clientClaims, error) {
	var c clientClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
		return clientClaims{}, err
	}
	if len(c.Roles)+len(c.Groups) > maxTokenRoles {
		return clientClaims{}, errors.New("token names too many roles and groups")
	}
	return c, nil
}

// roleSet is a connection's permissions: from its token, then changed by
// the REST API's grant and revoke.
type roleSet struct {
	mu    sync.Mutex
	roles map[string]struct{} // role names as tokens spell them
}

func newRoleSet(names []string) *roleSet {
	r := &roleSet{roles: make(map[string]struct{}, len(names))}
	for _, n := range names {
		r.roles[n] = struct{}{}
	}
	return r
}

// allows reports whether role (roleJoinLeaveGroup or roleSendToGroup) is
// granted for group: for every group, or for that one.
func (r *roleSet) allows(role, group string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, all := r.roles[role]
	_, one := r.roles[role+"."+group]
	return all || one
}

// grant and revoke change role, for group when it is not empty.
func (r *roleSet) grant(role, group string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.roles) < 4*maxTokenRoles {
		r.roles[roleName(role, group)] = struct{}{}
	}
}

func (r *roleSet) revoke(role, group string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.roles, roleName(role, group))
	if group == "" { // revoking the role for all groups takes every group's
		for name := range r.roles {
			if strings.HasPrefix(name, role+".") {
				delete(r.roles, name)
			}
		}
	}
}

// has reports whether role is granted exactly as named: for all groups
// when group is empty, or for that group.
func (r *roleSet) has(role, group string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.roles[roleName(role, group)]
	return ok
}

func roleName(role, group string) string {
	if group == "" {
		return role
	}
	return role + "." + group
}

// tokenRequest is a Web PubSub :generateToken call's query.
type tokenRequest struct {
	core.TokenRequest
	roles  []string // role, repeated
	groups []string // group, repeated, joined on connect
}

// parseTokenRequest reads what both services take (userId,
// minutesToExpire), then role, group and clientType; invalid says what is
// wrong.
func parseTokenRequest(q url.Values) (req tokenRequest, invalid string) {
	if req.TokenRequest, invalid = core.ParseTokenRequest(q); invalid != "" {
		return req, invalid
	}
	req.roles, req.groups = q["role"], q["group"]
	switch ct := q.Get("clientType"); {
	case ct != "" && !strings.EqualFold(ct, "Default"):
		return req, "The reference hub issues tokens for clientType Default only."
	case len(req.roles)+len(req.groups) > maxTokenRoles:
		return req, "Too many roles and groups."
	}
	for _, g := range req.groups {
		if !validGroup(g) {
			return req, "The group name must be 1 to 1024 characters."
		}
	}
	return req, ""
}
