package tiers

// Resources of a tier, named after the tier tables' columns (and
// TierLimits' JSON fields): what hubprobe_tier_limit is labelled by and
// what the rules compare a target's usage with.
const (
	ResourceConnections               = "connections"
	ResourceInboundBytesPerSecond     = "inbound_bytes_per_second"
	ResourceOutboundBytesPerSecond    = "outbound_bytes_per_second"
	ResourceInboundMessagesPerSecond  = "inbound_messages_per_second"
	ResourceOutboundMessagesPerSecond = "outbound_messages_per_second"
)

// ByResource is what the tier holds of each resource.
func (l TierLimits) ByResource() map[string]int64 {
	return map[string]int64{
		ResourceConnections:               l.Connections,
		ResourceInboundBytesPerSecond:     l.InboundBytesPerSecond,
		ResourceOutboundBytesPerSecond:    l.OutboundBytesPerSecond,
		ResourceInboundMessagesPerSecond:  l.InboundMessagesPerSecond,
		ResourceOutboundMessagesPerSecond: l.OutboundMessagesPerSecond,
	}
}
