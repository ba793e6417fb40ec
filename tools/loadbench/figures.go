package main

import (
	"fmt"
	"slices"
)

// figure indexes one number of a run, in the units the report uses.
type figure int

const (
	clientCPU          figure = iota // CPU-s per 1,000 round trips, in the window
	serverCPU                        //
	clientLifeCPU                    // CPU-s per 1,000 round trips, whole process
	serverLifeCPU                    //
	clientSwitches                   // voluntary context switches per round trip, in the window
	serverSwitches                   //
	clientKiBConnected               // KiB per connection once all are open
	clientKiBPeak                    // KiB per connection at the window's peak
	serverKiBConnected               //
	serverKiBPeak                    //
	p50ms                            // the client's own latency report
	p99ms                            //
	roundTrips                       // replies received
	lost                             // sent and never answered
	maxSendLagMs                     // the client's worst lateness against its open-loop schedule
	otherLoad                        // cores the rest of the machine kept busy in the window
	numFigures
)

// figureInfo labels each figure and says how to print it.
var figureInfo = [numFigures]struct{ label, format string }{
	clientCPU:          {"client CPU-s / 1,000 round trips (window)", "%.3f"},
	serverCPU:          {"server CPU-s / 1,000 round trips (window)", "%.3f"},
	clientLifeCPU:      {"client CPU-s / 1,000 round trips (whole process)", "%.3f"},
	serverLifeCPU:      {"server CPU-s / 1,000 round trips (whole process)", "%.3f"},
	clientSwitches:     {"client voluntary context switches / round trip (window)", "%.2f"},
	serverSwitches:     {"server voluntary context switches / round trip (window)", "%.2f"},
	clientKiBConnected: {"client KiB / connection, connected", "%.1f"},
	clientKiBPeak:      {"client KiB / connection, peak", "%.1f"},
	serverKiBConnected: {"server KiB / connection, connected", "%.1f"},
	serverKiBPeak:      {"server KiB / connection, peak", "%.1f"},
	p50ms:              {"p50 latency, ms", "%.2f"},
	p99ms:              {"p99 latency, ms", "%.2f"},
	roundTrips:         {"round trips", "%.0f"},
	lost:               {"lost", "%.0f"},
	maxSendLagMs:       {"client's worst send lag behind its schedule, ms", "%.1f"},
	otherLoad:          {"other load on the machine during the window, cores", "%.2f"},
}

// figures are one run's numbers, or the medians of several.
type figures [numFigures]float64

func figuresOf(m measurement, o options) figures {
	windowPerK := 1000 / m.windowRoundTrips(o.window)
	lifePerK := 1000 / float64(m.report.Received)
	kib := func(rss, base int64) float64 { return float64(rss-base) / 1024 / float64(o.n) }
	var f figures
	f[clientCPU], f[serverCPU] = m.client.cpu*windowPerK, m.server.cpu*windowPerK
	f[clientLifeCPU], f[serverLifeCPU] = m.clientLifeCPU*lifePerK, m.serverLifeCPU*lifePerK
	f[clientSwitches] = float64(m.client.switches) * windowPerK / 1000
	f[serverSwitches] = float64(m.server.switches) * windowPerK / 1000
	f[clientKiBConnected] = kib(m.client.connectedRSS, m.client.baseRSS)
	f[clientKiBPeak] = kib(m.client.peakRSS, m.client.baseRSS)
	f[serverKiBConnected] = kib(m.server.connectedRSS, m.server.baseRSS)
	f[serverKiBPeak] = kib(m.server.peakRSS, m.server.baseRSS)
	f[p50ms], f[p99ms] = m.report.Latency.P50*1000, m.report.Latency.P99*1000
	f[roundTrips], f[lost] = float64(m.report.Received), float64(m.report.Lost)
	f[maxSendLagMs] = m.report.MaxSendLagSecs * 1000
	f[otherLoad] = max(m.otherCPU, 0) / m.measured.Seconds()
	return f
}

func (f figures) summary() string {
	return fmt.Sprintf("client %.3f / server %.3f CPU-s per 1,000 RT, %.2f / %.2f voluntary switches per RT, client %.1f KiB/conn, p50 %.2f ms, p99 %.2f ms, %.0f round trips, %.0f lost, send lag at most %.1f ms, other load %.2f cores",
		f[clientCPU], f[serverCPU], f[clientSwitches], f[serverSwitches], f[clientKiBPeak], f[p50ms], f[p99ms], f[roundTrips], f[lost], f[maxSendLagMs], f[otherLoad])
}

// medians is the median of every figure over several runs.
func medians(fs []figures) figures {
	var m figures
	for i := range m {
		v := make([]float64, len(fs))
		for j, f := range fs {
			v[j] = f[i]
		}
		m[i] = median(v)
	}
	return m
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
