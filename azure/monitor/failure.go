package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/throttle"
)

// failure is why a read brought back nothing, or less than it asked for.
type failure struct {
	reason string
	// detail names the failure for the status page and the log: a status
	// code, Azure's error code, an Entra ID AADSTS code, the metrics at
	// fault. Never a token, a secret or a response body.
	detail string
	// retryAfter is the service's Retry-After on a throttle; 0 without.
	retryAfter time.Duration
	// unknownMetric is the metric a 400 named as unknown.
	unknownMetric string
}

// statusServiceOverloaded is the 529 Azure answers when it sheds load.
const statusServiceOverloaded = 529

// signInError marks a failure of the credential itself, as opposed to a
// refusal by Azure Monitor.
type signInError struct{ err error }

func (e *signInError) Error() string { return e.err.Error() }
func (e *signInError) Unwrap() error { return e.err }

// signInRecorder is the reader's credential: the SDK's bearer token
// policy calls its GetToken, which marks the credential's own failures.
type signInRecorder struct{ azcore.TokenCredential }

func (c signInRecorder) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := c.TokenCredential.GetToken(ctx, o)
	if err != nil && ctx.Err() == nil {
		err = &signInError{err}
	}
	return tok, err
}

var aadstsCode = regexp.MustCompile(`AADSTS\d+`)

// classify names the failure of a query for metrics.
func classify(err error, metrics []azureMetric) *failure {
	var signIn *signInError
	var re *azcore.ResponseError
	switch {
	case errors.As(err, &signIn):
		return &failure{reason: ReasonAuth, detail: signInDetail(signIn.err)}
	case errors.As(err, &re):
		return responseFailure(re, metrics)
	case errors.Is(err, context.DeadlineExceeded):
		return &failure{reason: ReasonNetwork, detail: "no answer within the read's deadline"}
	}
	var ue *url.Error
	var ne net.Error
	switch {
	case errors.As(err, &ue):
		return &failure{reason: ReasonNetwork, detail: redact.URLError(ue).Error()}
	case errors.As(err, &ne):
		return &failure{reason: ReasonNetwork, detail: ne.Error()}
	}
	return &failure{reason: ReasonBadResponse, detail: "HTTP 200 with a body that is not the metrics API's JSON"}
}

// signInDetail says that the sign-in failed and, when Entra ID answered,
// with which AADSTS code; the credential's own message may quote what it
// sent, so it is not shown.
func signInDetail(err error) string {
	var af *azidentity.AuthenticationFailedError
	if !errors.As(err, &af) {
		return "sign-in failed: no credential could sign in (see the credential's configuration)"
	}
	if code := aadstsCode.FindString(err.Error()); code != "" {
		return "sign-in failed: " + code
	}
	if af.RawResponse != nil {
		return fmt.Sprintf("sign-in failed: HTTP %d", af.RawResponse.StatusCode)
	}
	return "sign-in failed"
}

// responseFailure classifies an answer other than 200.
func responseFailure(re *azcore.ResponseError, metrics []azureMetric) *failure {
	detail := fmt.Sprintf("HTTP %d", re.StatusCode)
	if re.ErrorCode != "" {
		detail += " " + re.ErrorCode
	}
	f := &failure{reason: ReasonBadResponse, detail: detail}
	switch re.StatusCode {
	case http.StatusUnauthorized:
		f.reason = ReasonAuth
	case http.StatusForbidden:
		f.reason = ReasonForbidden
	case http.StatusNotFound:
		f.reason = ReasonNotFound
	case http.StatusTooManyRequests, statusServiceOverloaded:
		f.reason = ReasonThrottled
		f.retryAfter = retryAfter(re)
		if f.retryAfter > 0 {
			f.detail += fmt.Sprintf(", Retry-After %s", f.retryAfter)
		}
	case http.StatusBadRequest:
		if name := unknownMetric(re, metrics); name != "" {
			f.reason, f.unknownMetric = ReasonUnknownMetric, name
			f.detail += ": the resource has no metric " + name + "; no longer asked for"
		}
	}
	return f
}

func retryAfter(re *azcore.ResponseError) time.Duration {
	if re.RawResponse == nil {
		return 0
	}
	d, _ := throttle.ParseRetryAfter(re.RawResponse.Header.Get("Retry-After"), time.Now())
	return d
}

// unknownMetric finds which of metrics a 400 says the resource does not
// have. Azure Monitor words it "Failed to find metric configuration for
// provider: …, resource Type: …, metric: <name>, Valid metrics: …", so
// only the part before the list of valid ones is searched.
func unknownMetric(re *azcore.ResponseError, metrics []azureMetric) string {
	if re.RawResponse == nil {
		return ""
	}
	body, err := runtime.Payload(re.RawResponse)
	if err != nil {
		return ""
	}
	msg := strings.ToLower(string(body))
	msg, _, _ = strings.Cut(msg, "valid metrics")
	_, named, found := strings.Cut(msg, "metric: ")
	if !found {
		return ""
	}
	named, _, _ = strings.Cut(named, ",")
	named = strings.TrimSpace(strings.Trim(named, `"' `))
	for _, m := range metrics {
		if strings.EqualFold(m.name, named) {
			return m.name
		}
	}
	return ""
}
