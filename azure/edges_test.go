package azure

import "testing"

// The bytes either side of each character range the checks accept: the
// ranges' own ends are in, their neighbours out.
const (
	rangeEnds       = "azAZ09"
	rangeNeighbours = "`{@[/:"
)

// A connection string's endpoint host holds DNS name characters only.
func TestEndpointHostCharacterRanges(t *testing.T) {
	if !csValidHost(rangeEnds + "-._") {
		t.Errorf("host %q refused", rangeEnds+"-._")
	}
	for _, c := range rangeNeighbours {
		if host := "a" + string(c) + "z"; csValidHost(host) {
			t.Errorf("host %q accepted", host)
		}
	}
}

// Ports run from 1 to 65535, in the endpoint's URL and in Port=.
func TestPortBounds(t *testing.T) {
	for port, valid := range map[string]bool{"0": false, "1": true, "65535": true, "65536": false} {
		if got := csValidURLPort(port); got != valid {
			t.Errorf("endpoint port %s valid = %v, want %v", port, got, valid)
		}
		if p, err := csPort(map[string]string{csKeyPort: port}); (err == nil) != valid || valid && p == 0 {
			t.Errorf("Port=%s: %d, %v; want valid %v", port, p, err, valid)
		}
	}
}

// REST path segments keep RFC 3986's unreserved characters and escape
// every other byte.
func TestEscapeCharacterRanges(t *testing.T) {
	if got := azureEscape(rangeEnds + "-_~."); got != rangeEnds+"-_~." {
		t.Errorf("azureEscape(%q) = %q, want it unchanged", rangeEnds+"-_~.", got)
	}
	if got, want := azureEscape(rangeNeighbours), "%60%7B%40%5B%2F%3A"; got != want {
		t.Errorf("azureEscape(%q) = %q, want %q", rangeNeighbours, got, want)
	}
}

// A hub name is a letter, then letters, digits or '_'.
func TestHubNameCharacterRanges(t *testing.T) {
	for _, hub := range []string{"a", "z", "A", "Z", "a" + rangeEnds + "_"} {
		if err := azureCheckHub(hub); err != nil {
			t.Errorf("hub %q: %v", hub, err)
		}
	}
	for _, hub := range []string{"0a", "9a", "_a"} {
		if azureCheckHub(hub) == nil {
			t.Errorf("hub %q accepted: it does not start with a letter", hub)
		}
	}
	for _, c := range rangeNeighbours {
		if hub := "a" + string(c); azureCheckHub(hub) == nil {
			t.Errorf("hub %q accepted", hub)
		}
	}
}
