package scenarios

import "fmt"

// Shard is this process's part of a scenario spread over Count processes
// (replicas of a StatefulSet, completions of an Indexed Job). Every shard
// runs every scenario at the same instants with its share of the
// connections and senders, and counts only the messages it sent itself.
// The zero value is one process doing everything.
type Shard struct {
	Index int // 0 ≤ Index < Count
	Count int // 0 and 1 both mean unsharded
}

// Validate checks that the shard names one of Count shards.
func (s Shard) Validate() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard count %d must be at least 1", s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard index %d must be at least 0 and below the shard count %d", s.Index, s.Count)
	}
	return nil
}

// Sharded reports whether the scenario is spread over more than one shard.
func (s Shard) Sharded() bool { return s.Count > 1 }

func (s Shard) count() int { return max(s.Count, 1) }

// Share is this shard's part of n: n/Count, plus one for the first
// n mod Count shards, so the shares of all shards add up to n exactly.
func (s Shard) Share(n int) int {
	c := s.count()
	share := n / c
	if s.Index < n%c {
		share++
	}
	return share
}

// First is the index, among all n, of this shard's first item: the shares
// of the shards before it. Shard i holds items First(n) … First(n)+Share(n)-1.
func (s Shard) First(n int) int {
	c := s.count()
	return s.Index*(n/c) + min(s.Index, n%c)
}
