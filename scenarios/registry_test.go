package scenarios_test

import (
	"reflect"
	"testing"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

// Each kind runs on the services whose wire offers what it needs: the
// hub-method kinds where the hub has its method, the REST kinds where the
// service has a REST API, and send to a connection over REST on Web
// PubSub alone.
func TestKindsRunWhereTheirWireOffersWhatTheyNeed(t *testing.T) {
	core, classic, wps := config.ServiceSignalR, config.ServiceAspNetSignalR, config.ServiceWebPubSub
	want := config.Kinds{
		"echo":                    {classic, core, wps},
		"held":                    {classic, core, wps},
		"broadcast":               {classic, core},
		"send_to_client":          {classic, core},
		"send_to_group":           {classic, core, wps},
		"streaming_echo":          {core},
		"server_push":             {core},
		"rest_broadcast":          {core, wps},
		"rest_send_to_user":       {core, wps},
		"rest_send_to_group":      {core, wps},
		"rest_send_to_connection": {wps},
	}
	if got := scenarios.Kinds(); !reflect.DeepEqual(got, want) {
		t.Errorf("Kinds() = %v\nwant      %v", got, want)
	}
}
