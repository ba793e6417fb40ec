package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/hubprobe/hubprobe/internal/redact"
	"github.com/hubprobe/hubprobe/throttle"
)

// restTransport sends the REST calls of both services: a fresh token per
// request, the status reported to the observer, and retries after HTTP
// 429 as Retry-After and the backoff allow. What differs between the
// services (paths, api-version, the token's audience) is in each restCall.
type restTransport struct {
	opts RESTOptions
	auth requestAuth
}

// restCall is one logical operation; do may send it several times.
type restCall struct {
	op          string
	method      string
	url         string // the full request URL, query included
	audience    string // the aud of each request's token
	body        []byte // nil for calls without a body
	contentType string
	want        func(code int) bool
	// out, when set, receives the JSON body of a wanted response.
	out any
}

// do sends call, retrying after HTTP 429 only. Other failures are not
// retried: a send is not idempotent, and after a 5xx or a broken
// connection the service may already have delivered the message, so a
// retry could deliver it twice and skew what the probe measures.
func (t *restTransport) do(ctx context.Context, call restCall) error {
	for attempt := 1; ; attempt++ {
		rerr, err := t.attempt(ctx, call)
		if err != nil || rerr == nil {
			return err
		}
		rerr.Attempts = attempt
		wait, ok := t.retryWait(ctx, rerr, attempt)
		if !ok {
			return rerr
		}
		if err := t.opts.Sleep(ctx, wait); err != nil {
			rerr.Err = fmt.Errorf("gave up waiting %s to retry: %w", wait, err)
			return rerr
		}
	}
}

// attempt sends call once. It returns a *RESTError for an unexpected
// status, or an error when no response came back.
func (t *restTransport) attempt(ctx context.Context, call restCall) (*RESTError, error) {
	req, err := t.newRequest(ctx, call)
	if err != nil {
		return nil, err
	}
	res, err := t.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("azure: REST %s: %w", call.op, redact.URLError(err))
	}
	defer res.Body.Close()
	t.opts.Observer.HTTPResponse(EndpointREST, res.StatusCode)
	if call.want(res.StatusCode) {
		return nil, call.decode(res.Body)
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, restMaxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, restMaxDrain))
	retryAfter, _ := throttle.ParseRetryAfter(res.Header.Get("Retry-After"), t.opts.Now())
	return &RESTError{Op: call.op, StatusCode: res.StatusCode, Body: string(body), RetryAfter: retryAfter}, nil
}

// newRequest builds one request with its own token.
func (t *restTransport) newRequest(ctx context.Context, call restCall) (*http.Request, error) {
	var body io.Reader = http.NoBody
	if call.body != nil {
		body = bytes.NewReader(call.body)
	}
	req, err := http.NewRequestWithContext(ctx, call.method, call.url, body)
	if err != nil {
		return nil, fmt.Errorf("azure: REST %s: %w", call.op, redact.URLError(err))
	}
	if err := t.auth.authorize(ctx, req, call.audience); err != nil {
		return nil, fmt.Errorf("azure: REST %s: %w", call.op, err)
	}
	if call.contentType != "" {
		req.Header.Set("Content-Type", call.contentType)
	}
	return req, nil
}

// decode reads a wanted response: into out as JSON when the call wants its
// body, else drained so the connection can be reused.
func (call restCall) decode(body io.Reader) error {
	if call.out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(body, restMaxDrain))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(body, restMaxBody)).Decode(call.out); err != nil {
		return fmt.Errorf("azure: REST %s: the response is not the JSON expected: %w", call.op, err)
	}
	return nil
}
