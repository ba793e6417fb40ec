package azure

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hubprobe/hubprobe/throttle"
)

// statusOnlyError has a status code but is not a RESTError.
type statusOnlyError struct{ StatusCode int }

func (e *statusOnlyError) Error() string { return fmt.Sprintf("HTTP %d", e.StatusCode) }

func TestClassifyRESTThrottle(t *testing.T) {
	cases := []struct {
		err    error
		reason string
		ok     bool
	}{
		{&RESTError{StatusCode: 429}, throttle.HTTP429, true},
		{&RESTError{StatusCode: 429, Body: `{"message":"Connection count reaches limit."}`}, throttle.ConnectionLimit, true},
		{&RESTError{StatusCode: 429, Body: "Message count reaches limit."}, throttle.MessageLimit, true},
		{fmt.Errorf("scenario: %w", &RESTError{StatusCode: 429, Err: errors.New("gave up")}), throttle.HTTP429, true},
		{&RESTError{StatusCode: 500, Body: "Connection count reaches limit."}, "", false},
		{&RESTError{StatusCode: 401}, "", false},
		{&statusOnlyError{StatusCode: 429}, "", false}, // a negotiate 429 is the client's business
		{errors.New("HTTP 429"), "", false},
		{nil, "", false},
	}
	for _, c := range cases {
		reason, ok := ClassifyRESTThrottle(c.err)
		if reason != c.reason || ok != c.ok {
			t.Errorf("ClassifyRESTThrottle(%v) = %q, %v; want %q, %v", c.err, reason, ok, c.reason, c.ok)
		}
	}
}

func TestRESTErrorText(t *testing.T) {
	cases := map[string]*RESTError{
		"azure: REST broadcast: HTTP 500":                                       {Op: "broadcast", StatusCode: 500, Body: "secret-looking body", Attempts: 1},
		"azure: REST send to user: HTTP 429 after 4 attempts":                   {Op: "send to user", StatusCode: 429, Attempts: 4},
		"azure: REST add to group: HTTP 429 after 2 attempts: context canceled": {Op: "add to group", StatusCode: 429, Attempts: 2, Err: errors.New("context canceled")},
	}
	for want, e := range cases {
		if e.Error() != want {
			t.Errorf("Error() = %q, want %q", e.Error(), want)
		}
	}
}
