package core

// maxSpaces bounds the hub names one protocol keeps state for. Only holders
// of the access key can name new ones, but a bug on their side must not
// grow memory without limit.
const maxSpaces = 1024

// TooManySpacesText is every protocol's 503 answer when Spaces.Named finds
// no room for another hub name.
const TooManySpacesText = "Too many hub names."

// Roster is who is in one hub name, for the connections C of one protocol:
// connections by id, and the members of each group and of each user. A
// connection keeps the groups it joined itself (joined), so that leaving
// costs one lookup per group. Host.Mu guards both.
type Roster[C comparable] struct {
	Conns  map[string]C              // by connection id
	Groups map[string]map[C]struct{} // group name → members
	Users  map[string]map[C]struct{} // user id → connections
}

// NewRoster is an empty roster.
func NewRoster[C comparable]() Roster[C] {
	return Roster[C]{Conns: make(map[string]C), Groups: make(map[string]map[C]struct{}), Users: make(map[string]map[C]struct{})}
}

// Enter makes c addressable by its id and its user ("" for none).
func (r Roster[C]) Enter(c C, id, user string) {
	r.Conns[id] = c
	if user != "" {
		addMember(r.Users, user, c)
	}
}

// Exit removes c from the roster and every group it joined; false when c
// never entered.
func (r Roster[C]) Exit(c C, id, user string, joined map[string]struct{}) bool {
	if r.Conns[id] != c {
		return false
	}
	delete(r.Conns, id)
	if user != "" {
		removeMember(r.Users, user, c)
	}
	for g := range joined {
		r.Leave(c, g, joined)
	}
	return true
}

// Join adds c to group, unless c is no longer in the roster (it is
// leaving).
func (r Roster[C]) Join(c C, id, group string, joined *map[string]struct{}) {
	if r.Conns[id] != c {
		return
	}
	addMember(r.Groups, group, c)
	if *joined == nil {
		*joined = make(map[string]struct{})
	}
	(*joined)[group] = struct{}{}
}

// Leave takes c out of group.
func (r Roster[C]) Leave(c C, group string, joined map[string]struct{}) {
	delete(joined, group)
	removeMember(r.Groups, group, c)
}

// addMember and removeMember keep a set-valued index; empty sets go.
func addMember[C comparable](index map[string]map[C]struct{}, key string, c C) {
	members := index[key]
	if members == nil {
		members = make(map[C]struct{})
		index[key] = members
	}
	members[c] = struct{}{}
}

func removeMember[C comparable](index map[string]map[C]struct{}, key string, c C) {
	members := index[key]
	delete(members, c)
	if len(members) == 0 {
		delete(index, key)
	}
}

// Space is one hub name of one protocol (a SignalR hub on Azure SignalR
// Service, a hub of Azure Web PubSub): its roster and its message rate
// limit. Broadcasts, groups, users and connection ids never cross hub
// names, nor protocols.
type Space[C comparable] struct {
	Name string
	Roster[C]
	Limiter *RateLimiter // nil when messages are not limited
}

// Spaces are one protocol's hub names. Host.Mu guards ByName.
type Spaces[C comparable] struct {
	host   *Host
	ByName map[string]*Space[C]
}

// NewSpaces keeps the hub names of one protocol of h.
func NewSpaces[C comparable](h *Host) *Spaces[C] {
	return &Spaces[C]{host: h, ByName: make(map[string]*Space[C])}
}

// Named returns the state of hub name, creating it unless maxSpaces of
// them exist already.
func (s *Spaces[C]) Named(name string) (*Space[C], bool) {
	s.host.Mu.RLock()
	sp := s.ByName[name]
	s.host.Mu.RUnlock()
	if sp != nil {
		return sp, true
	}
	s.host.Mu.Lock()
	defer s.host.Mu.Unlock()
	if sp = s.ByName[name]; sp != nil { //nolint:gocritic // looked up again under the lock: double-checked
		return sp, true
	}
	if len(s.ByName) >= maxSpaces {
		return nil, false
	}
	sp = &Space[C]{Name: name, Roster: NewRoster[C]()}
	if rate := s.host.Config.MessageRateLimit; rate > 0 {
		sp.Limiter = NewRateLimiter(rate)
	}
	s.ByName[name] = sp
	return sp, true
}

// AppendConns appends every connection in every hub name to dst.
func (s *Spaces[C]) AppendConns(dst []C) []C {
	s.host.Mu.RLock()
	defer s.host.Mu.RUnlock()
	for _, sp := range s.ByName {
		for _, c := range sp.Conns {
			dst = append(dst, c)
		}
	}
	return dst
}

// Lifetime follows one protocol's connections from their upgrade to their
// end: the open ones, which Close asks to close, and their place in the
// roster of their hub name once they are addressable.
type Lifetime[C comparable] struct {
	host *Host
	open map[C]struct{} // guarded by Host.Mu
}

// NewLifetime follows the connections of one protocol of h.
func NewLifetime[C comparable](h *Host) *Lifetime[C] {
	return &Lifetime[C]{host: h, open: make(map[C]struct{})}
}

// Track admits a new connection unless the hub is closing; its goroutine
// counts on Host.Conns, to be marked done when it ends.
func (l *Lifetime[C]) Track(c C) bool {
	l.host.Mu.Lock()
	defer l.host.Mu.Unlock()
	if l.host.closed {
		return false
	}
	l.open[c] = struct{}{}
	l.host.Conns.Add(1)
	return true
}

// Register makes c addressable in s by id and user, and a member of groups
// (joined records them), unless the hub is closing.
func (l *Lifetime[C]) Register(c C, s *Space[C], id, user string, joined *map[string]struct{}, groups []string) bool {
	l.host.Mu.Lock()
	defer l.host.Mu.Unlock()
	if l.host.closed {
		return false
	}
	s.Enter(c, id, user)
	for _, g := range groups {
		s.Join(c, id, g, joined)
	}
	l.host.Metrics.Connections.Inc()
	return true
}

// Untrack forgets an ended connection and takes it out of s.
func (l *Lifetime[C]) Untrack(c C, s *Space[C], id, user string, joined map[string]struct{}) {
	l.host.Mu.Lock()
	defer l.host.Mu.Unlock()
	delete(l.open, c)
	if s.Exit(c, id, user, joined) {
		l.host.Metrics.Connections.Dec()
	}
}

// Open lists the open connections.
func (l *Lifetime[C]) Open() []C {
	l.host.Mu.RLock()
	defer l.host.Mu.RUnlock()
	open := make([]C, 0, len(l.open))
	for c := range l.open {
		open = append(open, c)
	}
	return open
}

// Drop ends up to n of the open connections (every one when n <= 0)
// that are still live, each with end, and returns how many it ended: the
// loop of every protocol's drill (Drill).
func (l *Lifetime[C]) Drop(n int, live func(C) bool, end func(C)) int {
	ended := 0
	for _, c := range l.Open() {
		if n > 0 && ended == n {
			break
		}
		if live(c) {
			end(c)
			ended++
		}
	}
	return ended
}
