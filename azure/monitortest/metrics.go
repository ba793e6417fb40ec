package monitortest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The JSON of Microsoft.Insights/metrics, as far as it is served.
type (
	metricsResponse struct {
		Cost           int          `json:"cost"`
		Timespan       string       `json:"timespan"`
		Interval       string       `json:"interval"`
		Value          []metricJSON `json:"value"`
		Namespace      string       `json:"namespace"`
		ResourceRegion string       `json:"resourceregion"`
	}
	metricJSON struct {
		ID                 string           `json:"id"`
		Type               string           `json:"type"`
		Name               localizable      `json:"name"`
		DisplayDescription string           `json:"displayDescription"`
		Unit               string           `json:"unit"`
		Timeseries         []timeseriesJSON `json:"timeseries"`
		ErrorCode          string           `json:"errorCode"`
	}
	localizable struct {
		Value          string `json:"value"`
		LocalizedValue string `json:"localizedValue"`
	}
	timeseriesJSON struct {
		Metadatavalues []metadataJSON `json:"metadatavalues"`
		Data           []pointJSON    `json:"data"`
	}
	metadataJSON struct {
		Name  localizable `json:"name"`
		Value string      `json:"value"`
	}
	pointJSON struct {
		TimeStamp string   `json:"timeStamp"`
		Maximum   *float64 `json:"maximum,omitempty"`
		Total     *float64 `json:"total,omitempty"`
	}
)

// serveMetrics answers one metrics request and records it.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	rec := Request{At: time.Now(), Path: r.URL.Path, Query: map[string]string{}}
	for k, v := range r.URL.Query() {
		rec.Query[k] = strings.Join(v, ",")
	}
	rec.Status = s.answer(w, r, &rec)
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, rec *Request) int {
	token, ok := s.authorized(r)
	rec.Bearer = token
	if !ok {
		return writeError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid.")
	}
	if a, ok := s.nextAnswer(); ok {
		maps.Copy(w.Header(), a.Header)
		w.WriteHeader(a.Status)
		_, _ = w.Write([]byte(a.Body))
		return a.Status
	}
	id, found := strings.CutSuffix(strings.ToLower(r.URL.Path), "/providers/microsoft.insights/metrics")
	res := s.lookup(id)
	switch {
	case !found:
		return writeError(w, http.StatusNotFound, "NotFound", "No route for "+r.URL.Path)
	case res == nil:
		return writeError(w, http.StatusNotFound, "ResourceNotFound", "The Resource '"+id+"' was not found.")
	}
	q, err := parseQuery(r.URL.Query())
	if err != nil {
		return writeError(w, http.StatusBadRequest, "BadRequest", err.Error())
	}
	body, status := res.respond(q)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return status
}

func (s *Server) nextAnswer() (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.answers) == 0 {
		return Answer{}, false
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, true
}

// lookup returns a copy of the resource, safe to read without the lock.
func (s *Server) lookup(id string) *resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.resources[id]
	if !ok {
		return nil
	}
	c := *r
	c.defs, c.values, c.closes = maps.Clone(r.defs), maps.Clone(r.values), maps.Clone(r.closes)
	return &c
}

// writeError answers with Azure's wrapped error JSON.
func writeError(w http.ResponseWriter, status int, code, message string) int {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
	return status
}

// respond builds the answer to q, or Azure's flat 400 for a metric the
// resource does not have or a dimension filter it cannot take.
func (r *resource) respond(q query) ([]byte, int) {
	resp := metricsResponse{Timespan: q.start.Format(time.RFC3339) + "/" + q.end.Format(time.RFC3339), Interval: q.interval,
		Namespace: "Microsoft.SignalRService/" + r.typ, ResourceRegion: "westeurope"}
	for _, name := range q.metrics {
		canonical, def, ok := r.def(name)
		if !ok {
			return flatError(fmt.Sprintf("Failed to find metric configuration for provider: Microsoft.SignalRService, resource Type: %s, metric: %s, Valid metrics: %s",
				r.typ, name, strings.Join(slices.Sorted(maps.Keys(r.defs)), ",")))
		}
		split := q.dimension != "" && slices.ContainsFunc(def.dimensions, func(d string) bool { return strings.EqualFold(d, q.dimension) })
		if q.dimension != "" && !split && q.validateDims {
			return flatError(fmt.Sprintf("Metric: %s does not support requested dimension combination: %s, supported ones are: %s",
				canonical, strings.ToLower(q.dimension), strings.Join(def.dimensions, ",")))
		}
		resp.Value = append(resp.Value, r.metric(q, canonical, def, split))
	}
	body, _ := json.Marshal(resp)
	return body, http.StatusOK
}

func flatError(message string) ([]byte, int) {
	body, _ := json.Marshal(map[string]string{"code": "BadRequest", "message": message})
	return body, http.StatusBadRequest
}

func (r *resource) def(name string) (string, metricDef, bool) {
	for n, d := range r.defs {
		if strings.EqualFold(n, name) {
			return n, d, true
		}
	}
	return "", metricDef{}, false
}

// closeCount is the metric split by closeDimension.
const (
	closeCount     = "ConnectionCloseCount"
	closeDimension = "ConnectionCloseCategory"
)

// metric is one metric's part of the answer: one series, or one per close
// category when the query splits the close count by it (at most top).
func (r *resource) metric(q query, name string, def metricDef, split bool) metricJSON {
	m := metricJSON{ID: r.id + "/providers/Microsoft.Insights/metrics/" + name, Type: "Microsoft.Insights/metrics",
		Name: localizable{name, name}, DisplayDescription: name, Unit: def.unit, ErrorCode: "Success", Timeseries: []timeseriesJSON{}}
	switch {
	case split && name == closeCount && strings.EqualFold(q.dimension, closeDimension):
		for _, category := range slices.Sorted(maps.Keys(r.closes))[:min(len(r.closes), q.top)] {
			ts := r.series(q, r.closes[category], true)
			// Azure lower-cases the dimension's name in metadatavalues.
			ts.Metadatavalues = []metadataJSON{{Name: localizable{strings.ToLower(closeDimension), closeDimension}, Value: category}}
			m.Timeseries = append(m.Timeseries, ts)
		}
	case split:
		// no data is recorded by the other dimensions here
	default:
		v, ok := r.values[name]
		if name == closeCount && !ok && len(r.closes) > 0 {
			for _, c := range r.closes {
				v += c
			}
			ok = true
		}
		m.Timeseries = append(m.Timeseries, r.series(q, v, ok))
	}
	return m
}

// series has a point per grain: v in the aggregations asked for, or no
// value at all without data and in the lagging newest grains.
func (r *resource) series(q query, v float64, has bool) timeseriesJSON {
	grains := q.grains()
	ts := timeseriesJSON{Metadatavalues: []metadataJSON{}, Data: make([]pointJSON, len(grains))}
	for i, t := range grains {
		ts.Data[i].TimeStamp = t.UTC().Format(time.RFC3339Nano)
		if !has || i >= len(grains)-r.lag {
			continue
		}
		value := v
		if q.aggregations["maximum"] {
			ts.Data[i].Maximum = &value
		}
		if q.aggregations["total"] {
			ts.Data[i].Total = &value
		}
	}
	return ts
}
