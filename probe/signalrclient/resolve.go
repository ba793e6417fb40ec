package signalrclient

import (
	"net/url"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// reservedHostError fails at once for hosts under .invalid
// (clientconn.ReservedHostError), in the phase that would have resolved
// the host.
func reservedHostError(endpoint *url.URL, skipNegotiation bool) error {
	phase := clientconn.PhaseNegotiate
	if skipNegotiation {
		phase = clientconn.PhaseTransport
	}
	return clientconn.ReservedHostError(endpoint, phase)
}
