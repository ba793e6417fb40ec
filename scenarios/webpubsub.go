package scenarios

import (
	"github.com/hubprobe/hubprobe/azure"
)

// WebPubSub is how a run reaches an Azure Web PubSub hub, or the embedded
// hub's emulation of one: the connection string gives the client URL, the
// key the client and REST tokens are minted with, and the REST endpoint.
type WebPubSub struct {
	ConnectionString azure.ConnectionString
	// Hub is the hub name on the service.
	Hub string
}
