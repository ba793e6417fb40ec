package wpswire

import (
	"testing"

	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// What Spec says the wire's connections offer is what their type offers.
func TestSpecOffersWhatTheConnectionsAre(t *testing.T) {
	rest := wire.CanREST | wire.CanRESTToConnection
	if got, want := wire.Of(conn{}), Spec.Offers&^rest; got != want {
		t.Errorf("connections offer %b, Spec says %b", got, want)
	}
}
