package hub

import "testing"

// A connection that leaves takes its groups and its user with it; one
// that never entered is not counted as leaving, and a leaving one cannot
// join.
func TestRosterEnterJoinExit(t *testing.T) {
	r := newRoster[int]()
	var joinedA, joinedB map[string]struct{}
	r.enter(1, "a", "alice")
	r.enter(2, "b", "alice")
	r.join(1, "a", "g", &joinedA)
	r.join(2, "b", "g", &joinedB)
	r.join(1, "a", "h", &joinedA)
	if len(r.groups["g"]) != 2 || len(r.groups["h"]) != 1 || len(r.users["alice"]) != 2 || len(joinedA) != 2 {
		t.Fatalf("after joining: groups %v, users %v, joined %v", r.groups, r.users, joinedA)
	}
	if !r.exit(1, "a", "alice", joinedA) {
		t.Fatal("exit of an entered connection reported false")
	}
	if _, ok := r.groups["h"]; ok || len(r.groups["g"]) != 1 || len(r.users["alice"]) != 1 || len(joinedA) != 0 {
		t.Fatalf("after exit: groups %v, users %v, joined %v", r.groups, r.users, joinedA)
	}
	if r.exit(1, "a", "alice", joinedA) || r.exit(3, "c", "", nil) {
		t.Fatal("exit of a connection not in the roster reported true")
	}
	r.join(1, "a", "g", &joinedA)
	if len(r.groups["g"]) != 1 || len(joinedA) != 0 {
		t.Fatalf("a connection that left joined again: %v, %v", r.groups, joinedA)
	}
	r.leave(2, "g", joinedB)
	if _, ok := r.groups["g"]; ok {
		t.Fatal("an empty group stayed")
	}
}
