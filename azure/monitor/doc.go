// Package monitor reads an Azure SignalR Service's or Azure Web PubSub's
// own server load and usage from Azure Monitor, the only place the services
// publish them (ServerLoad cannot even be exported by diagnostic settings),
// and exports them as hubprobe's metrics.
//
// One Reader per target sends one query per interval (a minute by default,
// also the time grain asked for) and never two at once: every metric name
// in one request, with the maximum and total aggregations, and the close
// count split by its ConnectionCloseCategory dimension through a $filter
// that ValidateDimensions=false lets the other metrics ignore. It keeps the
// newest non-null value of each metric in the last ten grains.
//
// It uses armmonitor's MetricsClient, the Resource Manager metrics API
// (Microsoft.Insights/metrics on the resource's ARM id), rather than
// azmetrics: azmetrics queries the regional data-plane endpoint
// ({region}.metrics.monitor.azure.com, metrics:getBatch), which needs the
// resource's region on top of its id and pays off when many resources of
// one subscription and region are read together. A hubprobe target is one
// resource, named by its ARM id alone; Resource Manager serves every region
// at one endpoint (or the sovereign cloud's), and the Monitoring Reader
// role is all either needs.
//
// Azure Monitor bills calls and throttles: the SDK's own retries are off.
// After a 429 or 529 the next query waits for the service's Retry-After
// (and at least an interval): one request after the wait, never a burst.
// Other failures back off from two to eight intervals, jittered.
package monitor
