package hub

import (
	"errors"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
)

// Roles a Web PubSub client token grants. Without one a client may only
// send events; a ".<group>" suffix limits a role to one group.
const (
	roleJoinLeaveGroup = "webpubsub.joinLeaveGroup"
	roleSendToGroup    = "webpubsub.sendToGroup"
)

// Permission names of the REST API's permission operations, and the role
// each grants.
var wpsPermissions = map[string]string{
	"joinLeaveGroup": roleJoinLeaveGroup,
	"sendToGroup":    roleSendToGroup,
}

// maxTokenRoles bounds the roles and groups one token may carry; the
// service refuses tokens over 4 KB, which holds far fewer.
const maxTokenRoles = 256

// wpsClaims are what a verified client token says about the connection:
// sub is the user id, role the permissions, webpubsub.group the groups
// joined on connect.
type wpsClaims struct {
	UserID string           `json:"sub"`
	Roles  jwt.ClaimStrings `json:"role"`
	Groups jwt.ClaimStrings `json:"webpubsub.group"`
}

// The claims interface golang-jwt wants; VerifyToken has already checked
// the registered claims.
func (c *wpsClaims) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }
func (c *wpsClaims) GetIssuedAt() (*jwt.NumericDate, error)       { return nil, nil }
func (c *wpsClaims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *wpsClaims) GetIssuer() (string, error)                   { return "", nil }
func (c *wpsClaims) GetSubject() (string, error)                  { return c.UserID, nil }
func (c *wpsClaims) GetAudience() (jwt.ClaimStrings, error)       { return nil, nil }

// parseWPSClaims reads the Web PubSub claims of a token azure.VerifyToken
// accepted (so its signature is checked: parsing it again unverified only
// reads what VerifyToken does not return).
func parseWPSClaims(token string) (wpsClaims, error) {
	var c wpsClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
		return wpsClaims{}, err
	}
	if len(c.Roles)+len(c.Groups) > maxTokenRoles {
		return wpsClaims{}, errors.New("token names too many roles and groups")
	}
	return c, nil
}

// wpsRoles is a connection's permissions: from its token, then changed by
// the REST API's grant and revoke.
type wpsRoles struct {
	mu    sync.Mutex
	roles map[string]struct{} // role names as tokens spell them
}

func newWPSRoles(names []string) *wpsRoles {
	r := &wpsRoles{roles: make(map[string]struct{}, len(names))}
	for _, n := range names {
		r.roles[n] = struct{}{}
	}
	return r
}

// allows reports whether role (roleJoinLeaveGroup or roleSendToGroup) is
// granted for group: for every group, or for that one.
func (r *wpsRoles) allows(role, group string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, all := r.roles[role]
	_, one := r.roles[role+"."+group]
	return all || one
}

// grant and revoke change role, for group when it is not empty.
func (r *wpsRoles) grant(role, group string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.roles) < 4*maxTokenRoles {
		r.roles[roleName(role, group)] = struct{}{}
	}
}

func (r *wpsRoles) revoke(role, group string) {
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
func (r *wpsRoles) has(role, group string) bool {
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
