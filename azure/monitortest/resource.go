package monitortest

import (
	"fmt"
	"maps"
	"strings"
)

// resource is one SignalR or Web PubSub resource and what its metrics say.
type resource struct {
	id, typ, name string
	defs          map[string]metricDef
	values        map[string]float64 // by metric name; absent: no data
	closes        map[string]float64 // ConnectionCloseCategory → closes per grain
	lag           int                // newest grains without data
}

// AddResource makes a resource of type SignalR or WebPubSub named name,
// with every metric its type has and no data yet, and returns its ARM id.
func (s *Server) AddResource(typ, name string) string {
	defs, ok := metricDefs[typ]
	if !ok {
		panic("monitortest: unknown resource type " + typ)
	}
	id := fmt.Sprintf("/subscriptions/%s/resourceGroups/hubprobe-test/providers/Microsoft.SignalRService/%s/%s", testSubscription, typ, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resources[strings.ToLower(id)] = &resource{id: id, typ: typ, name: name, defs: maps.Clone(defs),
		values: map[string]float64{}, closes: map[string]float64{}}
	return id
}

const testSubscription = "00000000-1111-2222-3333-444444444444"

// Set makes every grain of metric report v: its maximum and its total.
func (s *Server) Set(id, metric string, v float64) {
	s.update(id, func(r *resource) { r.values[metric] = v })
}

// Clear leaves metric without data: its grains carry a time stamp only, as
// Azure answers for a metric nothing was recorded for.
func (s *Server) Clear(id, metric string) {
	s.update(id, func(r *resource) { delete(r.values, metric) })
}

// SetCloses makes every grain report these closes per
// ConnectionCloseCategory value; the categories left out have none.
func (s *Server) SetCloses(id string, perCategory map[string]float64) {
	s.update(id, func(r *resource) { r.closes = maps.Clone(perCategory) })
}

// Remove takes metric off the resource's type, as a service that does not
// have it: a query naming it is refused with 400.
func (s *Server) Remove(id, metric string) {
	s.update(id, func(r *resource) { delete(r.defs, metric) })
}

// Lag leaves the newest n grains of every metric without data, as Azure
// Monitor does for the minutes it has not ingested yet.
func (s *Server) Lag(id string, n int) {
	s.update(id, func(r *resource) { r.lag = n })
}

func (s *Server) update(id string, f func(*resource)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.resources[strings.ToLower(id)]
	if !ok {
		panic("monitortest: no resource " + id)
	}
	f(r)
}
