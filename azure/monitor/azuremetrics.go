package monitor

import (
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/tiers"
)

// usage is one figure hubprobe exports from Azure Monitor; several Azure
// metrics (one per service) may feed the same usage.
type usage int

const (
	usageServerLoad usage = iota
	usageConnections
	usageQuotaUtilization
	usageInboundBytes
	usageOutboundBytes
	usageOutboundMessages
	usageCloses
	usageServerConnectionLatency
	usageSystemErrors
	usageUserErrors
)

// aggregation is the one a metric is read with. The query asks for both at
// once; each metric's value comes from its own.
type aggregation int

const (
	maximum aggregation = iota
	total
)

// queryAggregations is the query's aggregation parameter.
const queryAggregations = "maximum,total"

// unit turns a value as Azure reports it into hubprobe's base units.
type unit int

const (
	asIs     unit = iota
	percent       // Percent → a ratio
	perGrain      // a Total over the time grain → per second
	millis        // Milliseconds → seconds
)

func (u unit) convert(v float64, grain time.Duration) float64 {
	switch u {
	case percent:
		return v / 100
	case perGrain:
		return v / grain.Seconds()
	case millis:
		return v / 1000
	}
	return v
}

// azureMetric is one metric of the query: its name in Azure Monitor's REST
// API, the aggregation it is read with, and what hubprobe makes of it.
type azureMetric struct {
	name  string
	agg   aggregation
	unit  unit
	usage usage
}

// closeCount is the metric split by closeDimension.
const (
	closeCount     = "ConnectionCloseCount"
	closeDimension = "ConnectionCloseCategory"
)

// Each service's metrics, as Microsoft's "Supported metrics for
// Microsoft.SignalRService/SignalR" and ".../WebPubSub" list them (the same
// for their replicas): Web PubSub has no MessageCount, no
// ServerConnectionLatency and no error percentages, and calls its
// connection count TotalConnectionCount.
var (
	commonMetrics = []azureMetric{
		{"ServerLoad", maximum, percent, usageServerLoad},
		{"ConnectionQuotaUtilization", maximum, percent, usageQuotaUtilization},
		{"InboundTraffic", total, perGrain, usageInboundBytes},
		{"OutboundTraffic", total, perGrain, usageOutboundBytes},
		{closeCount, total, perGrain, usageCloses},
	}
	signalRMetrics = append([]azureMetric{
		{"ConnectionCount", maximum, asIs, usageConnections},
		{"MessageCount", total, perGrain, usageOutboundMessages},
		{"ServerConnectionLatency", maximum, millis, usageServerConnectionLatency},
		{"SystemErrors", maximum, percent, usageSystemErrors},
		{"UserErrors", maximum, percent, usageUserErrors},
	}, commonMetrics...)
	webPubSubMetrics = append([]azureMetric{
		{"TotalConnectionCount", maximum, asIs, usageConnections},
	}, commonMetrics...)
)

// metricsFor lists the metrics hubprobe reads for a service.
func metricsFor(service string) []azureMetric {
	if service == tiers.WebPubSub {
		return append([]azureMetric(nil), webPubSubMetrics...)
	}
	return append([]azureMetric(nil), signalRMetrics...)
}

// Close categories, the values of the category label: Azure's
// ConnectionCloseCategory values of both services in snake case, and
// CategoryOther for any value Azure adds later.
const (
	CategoryThrottled = "throttled"
	CategoryOther     = "other"
)

var closeCategories = map[string]string{
	"normal":                      "normal",
	"throttled":                   CategoryThrottled,
	"pingtimeout":                 "ping_timeout",
	"noavailableserverconnection": "no_available_server_connection",
	"invokeupstreamfailed":        "invoke_upstream_failed",
	"slowclient":                  "slow_client",
	"handshakeerror":              "handshake_error",
	"serverconnectionnotfound":    "server_connection_not_found",
	"serverconnectionclosed":      "server_connection_closed",
	"servicetransienterror":       "service_transient_error",
	"badrequest":                  "bad_request",
	"closedbyappserver":           "closed_by_app_server",
	"servicereload":               "service_reload",
	"servicemodeswitched":         "service_mode_switched",
	"unauthorized":                "unauthorized",
	"sendeventfailed":             "send_event_failed",
	"eventhandlernotfound":        "event_handler_not_found",
}

// closeCategory maps Azure's category to the label value; a server string
// never becomes a label.
func closeCategory(azure string) string {
	if c, ok := closeCategories[strings.ToLower(azure)]; ok {
		return c
	}
	return CategoryOther
}
