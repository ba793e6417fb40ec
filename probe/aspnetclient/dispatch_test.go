package aspnetclient

import (
	"encoding/json"
	"testing"
)

// A hub's call to the client costs one allocation, the envelope's new
// cursor: the handler is found by the name the hub spells without
// lowercasing it, and the call's hub and method names are the last
// call's.
func TestHubCallAllocatesOnlyTheCursor(t *testing.T) {
	var calls int
	o := &Options{Handlers: map[string]Handler{"Measure": func(args []json.RawMessage) {
		if len(args) == 2 && string(args[1]) == `"p"` {
			calls++
		}
	}}}
	c := &Conn{s: &session{}, o: o, handlers: handlersByName(o.Handlers)}
	frame := []byte(`{"C":"12","M":[{"H":"Signalrbench","M":"Measure","A":[1,"p"]}]}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.handleFrame(frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 || calls != 101 {
		t.Fatalf("%v allocations per call (want 1), %d calls handled (want 101)", allocs, calls)
	}
}
