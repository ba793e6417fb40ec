package signalrhub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wiretest"
)

func TestServerPushSendsTheBatchInOrder(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{SendQueueSize: 4}) // far smaller than the batch
	c := wiretest.Connect(t, srv)
	const n = 300
	c.Send(`{"type":1,"invocationId":"1","target":"serverpush","arguments":[` + oddPayload + `,` + fmt.Sprint(n) + `]}`)
	if got, want := c.NextNonPingRecord(), `{"type":3,"invocationId":"1"}`; got != want {
		t.Fatalf("first record %s, want the Completion %s", got, want)
	}
	for i := range n {
		want := `{"type":1,"target":"RecordLatency","arguments":[` + oddPayload + `,` + fmt.Sprint(i) + `]}`
		if got := c.NextNonPingRecord(); got != want {
			t.Fatalf("push %d:\n got %s\nwant %s", i, got, want)
		}
	}
	// The client read slowly (one record at a time) yet was not dropped.
	c.Send(`{"type":1,"invocationId":"2","target":"Echo","arguments":[{"i":1}]}`)
	if got := c.NextNonPingRecord(); got != recordLatencyRecord(`{"i":1}`) {
		t.Fatalf("after the batch got %s, want the echo", got)
	}
}

func TestServerPushRefusesBadArguments(t *testing.T) {
	_, srv, _ := startHub(t, Config{}, core.Config{})
	c := wiretest.Connect(t, srv)
	tests := []struct{ args, want string }{
		{`{"a":1}`, "expected 2 arguments (payload, count), got 1"},
		{`"text",3`, "the payload is not an object"},
		{`{"a":1},0`, "the count is not an integer from 1 to 100000"},
		{`{"a":1},100001`, "the count is not an integer from 1 to 100000"},
		{`{"a":1},1.5`, "the count is not an integer from 1 to 100000"},
	}
	for i, tt := range tests {
		c.Send(fmt.Sprintf(`{"type":1,"invocationId":"%d","target":"ServerPush","arguments":[%s]}`, i, tt.args))
		got := c.NextNonPingRecord()
		if !strings.Contains(got, `"invocationId":"`+fmt.Sprint(i)+`"`) || !strings.Contains(got, tt.want) {
			t.Errorf("ServerPush(%s) answered %s, want an error with %q", tt.args, got, tt.want)
		}
	}
}

func TestServerPushWaitsForSlowMode(t *testing.T) {
	h, srv, _ := startHub(t, Config{}, core.Config{})
	h.SetDeliveryDelay(150 * time.Millisecond)
	c := wiretest.Connect(t, srv)
	c.Send(`{"type":1,"target":"ServerPush","arguments":[{"a":1},2]}`)
	began := time.Now()
	for i := range 2 {
		if got, want := c.NextNonPingRecord(), `{"type":1,"target":"RecordLatency","arguments":[{"a":1},`+fmt.Sprint(i)+`]}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if waited := time.Since(began); waited < 140*time.Millisecond {
		t.Fatalf("the batch came after %s, before the 150ms delivery delay", waited)
	}
}
