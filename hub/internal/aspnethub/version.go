package aspnethub

import (
	"slices"
	"strconv"
	"strings"
)

// version is a System.Version: major, minor, build, revision, with -1
// for a component not given.
type version [4]int

// The protocol versions a 2.x server speaks: its ProtocolResolver's.
var (
	minProtocol = version{1, 2, -1, -1}
	maxProtocol = version{2, 0, -1, -1}
)

// parseVersion reads v as .NET's Version.TryParse does: two to four
// non-negative numbers separated by dots (a sign allowed, as int.TryParse
// allows it).
func parseVersion(v string) (version, bool) {
	parts := strings.Split(v, ".")
	out := version{-1, -1, -1, -1}
	if len(parts) < 2 || len(parts) > len(out) {
		return out, false
	}
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// compare orders versions as System.Version does: component by component,
// a missing one below any given one.
func (v version) compare(w version) int { return slices.Compare(v[:], w[:]) }

// String writes the components given, as System.Version.ToString does.
func (v version) String() string {
	parts := make([]string, 0, len(v))
	for _, n := range v {
		if n < 0 {
			break
		}
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ".")
}

// resolveProtocol is the version a 2.x server answers a client's
// clientProtocol with, as ProtocolResolver resolves it: the client's,
// held within the versions the server speaks, and the oldest when it
// cannot be read.
func resolveProtocol(client string) string {
	v, ok := parseVersion(client)
	switch {
	case !ok || v.compare(minProtocol) < 0:
		return minProtocol.String()
	case v.compare(maxProtocol) > 0:
		return maxProtocol.String()
	}
	return v.String()
}
