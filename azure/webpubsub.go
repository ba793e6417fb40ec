package azure

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/webpubsub"
)

// Web PubSub client roles, the role claim values that let a connection
// join and leave groups and send to them through its subprotocol. A
// connection without roles may only send events.
const (
	WebPubSubRoleJoinLeaveGroup = "webpubsub.joinLeaveGroup"
	WebPubSubRoleSendToGroup    = "webpubsub.sendToGroup"
)

// WebPubSubClientURL returns where a Web PubSub client connects:
// ws(s)://host[:port][/prefix]/client/hubs/{hub}, on the Endpoint key with
// the Port key applied and http mapped to ws, as the service SDK builds
// it. The hub keeps its case. The access token is the caller's to add.
func (cs ConnectionString) WebPubSubClientURL(hub string) (string, error) {
	base, err := cs.webPubSubBase(hub)
	if err != nil {
		return "", err
	}
	return "ws" + strings.TrimPrefix(base, "http") + webPubSubClientPath(hub), nil
}

// WebPubSubClientToken mints a client token for hub as the service SDK
// does: aud is http(s)://host[:port][/prefix]/client/hubs/{hub} (the
// client URL on its http scheme), sub is userID when not empty, role lists
// roles, iat is now and exp now+ttl (ttl <= 0 means
// DefaultClientTokenTTL). It sets no nbf, as the SDK does not, so a service
// clock a little behind cannot refuse a fresh token.
func WebPubSubClientToken(cs ConnectionString, hub, userID string, roles []string, ttl time.Duration) (string, error) {
	base, err := cs.webPubSubBase(hub)
	if err != nil {
		return "", err
	}
	if cs.key == nil {
		return "", errors.New("azure: Web PubSub client token: connection string has no AccessKey")
	}
	now := time.Now()
	return MintToken(cs.key.secret, TokenClaims{
		Audience:  base + webPubSubClientPath(hub),
		ExpiresAt: now.Add(ttlOr(ttl, DefaultClientTokenTTL)),
		IssuedAt:  now,
		Subject:   userID,
		Roles:     roles,
	})
}

// webPubSubBase is Endpoint with the Port key applied, which is where a
// Web PubSub service's clients connect and its REST requests go, and
// what their tokens name; it checks the hub too.
func (cs ConnectionString) webPubSubBase(hub string) (string, error) {
	if !webpubsub.ValidHub(hub) {
		return "", fmt.Errorf("azure: Web PubSub hub %q must start with a letter and hold only letters, digits and _`,.[]", azureTruncate(hub, 64))
	}
	if cs.endpoint == nil {
		return "", errors.New("azure: Web PubSub: connection string has no Endpoint")
	}
	return csURLString(cs.withPort(cs.endpoint)), nil
}

func webPubSubClientPath(hub string) string { return "/client/hubs/" + url.PathEscape(hub) }
