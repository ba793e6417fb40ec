package signalrclient

import (
	"net"
	"net/url"
	"strings"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// reservedHostError fails at once for hosts under .invalid, which RFC 6761
// reserves so that they never resolve and asks resolvers to refuse without
// a lookup. Go's resolver asks DNS anyway, which offline means waiting for
// the resolver to time out; a placeholder target should fail fast and say
// why, as a DNS failure of the phase that would have resolved the host.
func reservedHostError(endpoint *url.URL, skipNegotiation bool) error {
	host := strings.TrimSuffix(strings.ToLower(endpoint.Hostname()), ".")
	if host != "invalid" && !strings.HasSuffix(host, ".invalid") {
		return nil
	}
	phase := clientconn.PhaseNegotiate
	if skipNegotiation {
		phase = clientconn.PhaseTransport
	}
	return &clientconn.ConnectError{Phase: phase, Step: clientconn.PhaseDNS, Err: &net.DNSError{
		Err:        "no such host (.invalid names never resolve)",
		Name:       endpoint.Hostname(),
		IsNotFound: true,
	}}
}
