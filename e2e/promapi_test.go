package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// promAPI is the small part of Prometheus' HTTP API the tests read.
type promAPI struct {
	base string // http://host:port
}

// apiResponse is the envelope of every /api/v1 answer.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

func (s sample) value() string {
	v, _ := s.Value[1].(string)
	return v
}

type queryData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// queryResult is what an instant query returned: the samples, and the raw
// JSON for error messages.
type queryResult struct {
	Samples []sample
	Raw     string
}

// query evaluates expr now. A PromQL error is returned as an error that
// quotes Prometheus.
func (p promAPI) query(ctx context.Context, expr string) (queryResult, error) {
	return p.queryAt(ctx, expr, time.Time{})
}

// queryAt evaluates expr at the instant at, to the millisecond; the zero
// time means now.
func (p promAPI) queryAt(ctx context.Context, expr string, at time.Time) (queryResult, error) {
	params := url.Values{"query": {expr}}
	if !at.IsZero() {
		params.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	raw, data, err := p.get(ctx, "/api/v1/query?"+params.Encode())
	if err != nil {
		return queryResult{Raw: raw}, err
	}
	var qd queryData
	if err := json.Unmarshal(data, &qd); err != nil {
		return queryResult{Raw: raw}, err
	}
	res := queryResult{Raw: raw}
	switch qd.ResultType {
	case "vector":
		err = json.Unmarshal(qd.Result, &res.Samples)
	case "scalar":
		var s sample
		err = json.Unmarshal(qd.Result, &s.Value)
		res.Samples = []sample{s}
	default:
		err = fmt.Errorf("unexpected result type %q", qd.ResultType)
	}
	return res, err
}

// ruleGroup and rule mirror /api/v1/rules.
type ruleGroup struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Name           string    `json:"name"`
	Type           string    `json:"type"` // "recording" or "alerting"
	Query          string    `json:"query"`
	Health         string    `json:"health"`
	LastError      string    `json:"lastError"`
	LastEvaluation time.Time `json:"lastEvaluation"`
	State          string    `json:"state"` // alerting rules only
}

func (p promAPI) rules(ctx context.Context) ([]ruleGroup, error) {
	_, data, err := p.get(ctx, "/api/v1/rules")
	if err != nil {
		return nil, err
	}
	var d struct {
		Groups []ruleGroup `json:"groups"`
	}
	return d.Groups, json.Unmarshal(data, &d)
}

// activeAlert mirrors one entry of /api/v1/alerts.
type activeAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"` // "pending" or "firing"
	Value       string            `json:"value"`
}

func (p promAPI) alerts(ctx context.Context) ([]activeAlert, error) {
	_, data, err := p.get(ctx, "/api/v1/alerts")
	if err != nil {
		return nil, err
	}
	var d struct {
		Alerts []activeAlert `json:"alerts"`
	}
	return d.Alerts, json.Unmarshal(data, &d)
}

// exemplarSeries mirrors one element of /api/v1/query_exemplars.
type exemplarSeries struct {
	SeriesLabels map[string]string `json:"seriesLabels"`
	Exemplars    []struct {
		Labels map[string]string `json:"labels"`
		Value  string            `json:"value"`
	} `json:"exemplars"`
}

// exemplars returns the exemplars Prometheus keeps of the series expr
// selects, from the last window.
func (p promAPI) exemplars(ctx context.Context, expr string, window time.Duration) ([]exemplarSeries, error) {
	now := time.Now()
	q := url.Values{"query": {expr},
		"start": {strconv.FormatInt(now.Add(-window).Unix(), 10)}, "end": {strconv.FormatInt(now.Unix(), 10)}}
	_, data, err := p.get(ctx, "/api/v1/query_exemplars?"+q.Encode())
	if err != nil {
		return nil, err
	}
	var out []exemplarSeries
	err = json.Unmarshal(data, &out) // fills out: before out is returned, not beside it
	return out, err
}

// get fetches an API path and unwraps the envelope; raw is the whole body.
func (p promAPI) get(ctx context.Context, path string) (raw string, data json.RawMessage, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return "", nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", nil, err
	}
	var env apiResponse
	if err := json.Unmarshal(body, &env); err != nil {
		return string(body), nil, fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if env.Status != "success" {
		return string(body), nil, fmt.Errorf("%s: %s: %s", env.ErrorType, resp.Status, env.Error)
	}
	return string(body), env.Data, nil
}
