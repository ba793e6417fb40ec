package aspnethub

import "testing"

// Method names match without regard to case, as HubDispatcher matches
// them, and an ASCII name is found without a lowercased copy.
func TestLookupMethodIgnoresCase(t *testing.T) {
	for name, found := range map[string]bool{
		"echo": true, "Echo": true, "ECHO": true, "GroupBroadcast": true, "sendToConnection": true,
		"echo2": false, "Echö": false, "": false, "SendToConnectionSendToConnectionX": false,
	} {
		if _, ok := lookupMethod(name); ok != found {
			t.Errorf("lookupMethod(%q) found %v, want %v", name, ok, found)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = lookupMethod("GroupBroadcast") }); n != 0 {
		t.Errorf("looking up an ASCII name allocates %v times, want 0", n)
	}
}
