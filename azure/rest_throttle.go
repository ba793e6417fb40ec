package azure

import (
	"errors"
	"net/http"

	"github.com/hubprobe/hubprobe/throttle"
)

// ClassifyRESTThrottle tells whether err is a REST call the service
// throttled (HTTP 429), and which throttle reason applies: the body's
// "Connection count reaches limit." or "Message count reaches limit."
// when it says so, http_429 otherwise.
func ClassifyRESTThrottle(err error) (reason string, throttled bool) {
	var re *RESTError
	if !errors.As(err, &re) || re.StatusCode != http.StatusTooManyRequests {
		return "", false
	}
	return throttle.FromHTTPBody(re.Body), true
}
