package webpubsub

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// APIVersion is the current stable data-plane REST api-version.
const APIVersion = "2024-12-01"

// hubName is the hub name pattern of the data-plane REST API.
var hubName = regexp.MustCompile("^[A-Za-z][A-Za-z0-9_`,.\\[\\]]{0,127}$")

// ValidHub reports whether hub is a name the REST API accepts.
func ValidHub(hub string) bool { return hubName.MatchString(hub) }

// REST builds the data-plane request URLs of one hub. Tokens are not its
// business: each request needs one whose audience is its URL.
type REST struct {
	base       string // scheme://host[:port][/prefix]/api/hubs/{hub}
	apiVersion string
}

// Request is the method and URL of one REST operation.
type Request struct {
	Method string
	URL    string
}

// NewREST checks endpoint (http or https, a host, no query) and hub, and
// returns the builder; an empty apiVersion means APIVersion.
func NewREST(endpoint, hub, apiVersion string) (*REST, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		// The URL itself stays out of the message: it may hold a password.
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("webpubsub: endpoint is not a URL: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("webpubsub: endpoint %s: want http(s)://host[:port] without user, query or fragment", quoteLimited(u.Redacted()))
	}
	if !ValidHub(hub) {
		return nil, fmt.Errorf("webpubsub: hub %s: want a letter then up to 127 letters, digits or _`,.[]", quoteLimited(hub))
	}
	if apiVersion == "" {
		apiVersion = APIVersion
	}
	base := u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/") + "/api/hubs/" + url.PathEscape(hub)
	return &REST{base: base, apiVersion: apiVersion}, nil
}

func (r *REST) request(method, path string, query url.Values) Request {
	if query == nil {
		query = url.Values{}
	}
	query.Set("api-version", r.apiVersion)
	return Request{Method: method, URL: r.base + path + "?" + query.Encode()}
}

func segment(s string) string { return "/" + url.PathEscape(s) }

func excludedQuery(excluded []string) url.Values {
	if len(excluded) == 0 {
		return nil
	}
	return url.Values{"excluded": excluded}
}

// SendToAll broadcasts to every connection of the hub but the excluded ones.
func (r *REST) SendToAll(excluded ...string) Request {
	return r.request(http.MethodPost, "/:send", excludedQuery(excluded))
}

// SendToUser sends to every connection of userID.
func (r *REST) SendToUser(userID string) Request {
	return r.request(http.MethodPost, "/users"+segment(userID)+"/:send", nil)
}

// SendToGroup sends to every connection in group but the excluded ones.
func (r *REST) SendToGroup(group string, excluded ...string) Request {
	return r.request(http.MethodPost, "/groups"+segment(group)+"/:send", excludedQuery(excluded))
}

// SendToConnection sends to one connection.
func (r *REST) SendToConnection(connectionID string) Request {
	return r.request(http.MethodPost, "/connections"+segment(connectionID)+"/:send", nil)
}

// AddConnectionToGroup adds a connection to group (200).
func (r *REST) AddConnectionToGroup(group, connectionID string) Request {
	return r.request(http.MethodPut, "/groups"+segment(group)+"/connections"+segment(connectionID), nil)
}

// RemoveConnectionFromGroup removes a connection from group (204).
func (r *REST) RemoveConnectionFromGroup(group, connectionID string) Request {
	return r.request(http.MethodDelete, "/groups"+segment(group)+"/connections"+segment(connectionID), nil)
}

// AddUserToGroup adds every connection of userID to group (200).
func (r *REST) AddUserToGroup(userID, group string) Request {
	return r.request(http.MethodPut, "/users"+segment(userID)+"/groups"+segment(group), nil)
}

// ConnectionExists checks a connection (HEAD: 200 or 404).
func (r *REST) ConnectionExists(connectionID string) Request {
	return r.request(http.MethodHead, "/connections"+segment(connectionID), nil)
}

// UserExists checks whether userID has a connection (HEAD: 200 or 404).
func (r *REST) UserExists(userID string) Request {
	return r.request(http.MethodHead, "/users"+segment(userID), nil)
}

// GroupExists checks whether group has a connection (HEAD: 200 or 404).
func (r *REST) GroupExists(group string) Request {
	return r.request(http.MethodHead, "/groups"+segment(group), nil)
}

// CloseConnection closes a connection, giving reason when not empty (204).
func (r *REST) CloseConnection(connectionID, reason string) Request {
	var q url.Values
	if reason != "" {
		q = url.Values{"reason": {reason}}
	}
	return r.request(http.MethodDelete, "/connections"+segment(connectionID), q)
}

// GenerateToken asks the service for a client access token of userID (none
// when empty) with roles, valid for minutes: how a client of a service that
// signs in with Microsoft Entra ID, and holds no access key, gets one.
func (r *REST) GenerateToken(userID string, roles []string, minutes int) Request {
	q := url.Values{"minutesToExpire": {strconv.Itoa(minutes)}}
	if userID != "" {
		q.Set("userId", userID)
	}
	if len(roles) > 0 {
		q["role"] = roles
	}
	return r.request(http.MethodPost, "/:generateToken", q)
}
