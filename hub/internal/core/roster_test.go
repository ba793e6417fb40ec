package core

import "testing"

// A connection that leaves takes its groups and its user with it; one
// that never entered is not counted as leaving, and a leaving one cannot
// join.
func TestRosterEnterJoinExit(t *testing.T) {
	r := NewRoster[int]()
	var joinedA, joinedB map[string]struct{}
	r.Enter(1, "a", "alice")
	r.Enter(2, "b", "alice")
	r.Join(1, "a", "g", &joinedA)
	r.Join(2, "b", "g", &joinedB)
	r.Join(1, "a", "h", &joinedA)
	if len(r.Groups["g"]) != 2 || len(r.Groups["h"]) != 1 || len(r.Users["alice"]) != 2 || len(joinedA) != 2 {
		t.Fatalf("after joining: groups %v, users %v, joined %v", r.Groups, r.Users, joinedA)
	}
	if !r.Exit(1, "a", "alice", joinedA) {
		t.Fatal("exit of an entered connection reported false")
	}
	if _, ok := r.Groups["h"]; ok || len(r.Groups["g"]) != 1 || len(r.Users["alice"]) != 1 || len(joinedA) != 0 {
		t.Fatalf("after exit: groups %v, users %v, joined %v", r.Groups, r.Users, joinedA)
	}
	if r.Exit(1, "a", "alice", joinedA) || r.Exit(3, "c", "", nil) {
		t.Fatal("exit of a connection not in the roster reported true")
	}
	r.Join(1, "a", "g", &joinedA)
	if len(r.Groups["g"]) != 1 || len(joinedA) != 0 {
		t.Fatalf("a connection that left joined again: %v, %v", r.Groups, joinedA)
	}
	r.Leave(2, "g", joinedB)
	if _, ok := r.Groups["g"]; ok {
		t.Fatal("an empty group stayed")
	}
}
