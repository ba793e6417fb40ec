package monitortest

// Resource types, as they appear in ARM ids.
const (
	SignalR   = "SignalR"
	WebPubSub = "WebPubSub"
)

// metricDef is one metric a resource type has in Azure Monitor.
type metricDef struct {
	unit       string
	dimensions []string
}

// metricDefs are the metrics of each resource type as Microsoft's
// "Supported metrics" pages list them (replicas have the same).
var metricDefs = map[string]map[string]metricDef{
	SignalR: {
		"ConnectionCloseCount":       {"Count", []string{"Endpoint", "ConnectionCloseCategory"}},
		"ConnectionCount":            {"Count", []string{"Endpoint"}},
		"ConnectionOpenCount":        {"Count", []string{"Endpoint"}},
		"ConnectionQuotaUtilization": {"Percent", nil},
		"InboundTraffic":             {"Bytes", nil},
		"MessageCount":               {"Count", nil},
		"OutboundTraffic":            {"Bytes", nil},
		"ServerConnectionLatency":    {"MilliSeconds", nil},
		"ServerLoad":                 {"Percent", nil},
		"SystemErrors":               {"Percent", nil},
		"UserErrors":                 {"Percent", nil},
	},
	WebPubSub: {
		"ClientRequestStatus":        {"Count", []string{"ClientType", "Status"}},
		"ConnectionCloseCount":       {"Count", []string{"ConnectionCloseCategory"}},
		"ConnectionOpenCount":        {"Count", nil},
		"ConnectionQuotaUtilization": {"Percent", nil},
		"InboundTraffic":             {"Bytes", nil},
		"OutboundTraffic":            {"Bytes", nil},
		"RestApiResponseTimeCount":   {"Count", []string{"ResponseTime", "RestApiCategory"}},
		"ServerLoad":                 {"Percent", nil},
		"TotalConnectionCount":       {"Count", nil},
	},
}
