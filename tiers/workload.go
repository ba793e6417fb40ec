package tiers

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// Scenario kinds a workload is split into: the guides' basic scenarios.
const (
	KindEcho             = "echo"               // each sender gets its own message back (SignalR)
	KindBroadcast        = "broadcast"          // every connection receives each message (SignalR)
	KindSendToGroup      = "send_to_group"      // each message goes to one group
	KindSendToConnection = "send_to_connection" // each message goes to one other connection (SignalR)
	KindRESTBroadcast    = "rest_broadcast"     // REST call delivered to every connection
	KindRESTSendToUser   = "rest_send_to_user"  // REST call delivered to one user
	KindUpstreamEcho     = "upstream_echo"      // Web PubSub event echoed by the CloudEvents upstream
)

// Fan-out rules of the tables: how many connections receive one message.
const (
	fanoutOne   = "one"
	fanoutAll   = "all"
	fanoutGroup = "group"
)

// Defaults and rules taken from the guides.
const (
	// DefaultMaxLoad is the share of each limit a plan may use: the guides
	// keep latency low while Server Load stays under 70 %.
	DefaultMaxLoad = 0.7
	// DefaultMessageSize and DefaultSendInterval are the guides' benchmark
	// settings, used when a workload scenario leaves them out.
	DefaultMessageSize  = 2048
	DefaultSendInterval = time.Second
	// MinCountedMessageSize: the guides count a message smaller than 1,024
	// bytes as a 1,024-byte one, since it costs about as much.
	MinCountedMessageSize = 1024
	// SmallGroupBelow: groups with fewer members than this are planned with
	// the small-group table (the guides' "group size < 20").
	SmallGroupBelow = 20
)

// Workload is a mix of basic scenarios to size a tier for.
type Workload struct {
	Service string `json:"service" yaml:"service"`
	// MaxLoad is the share of each limit the plan may use, in (0, 1];
	// zero means DefaultMaxLoad.
	MaxLoad float64 `json:"max_load,omitempty" yaml:"max_load"`
	// Connections is the number of distinct client connections when
	// scenarios share clients; zero means the sum over scenarios.
	Connections int64  `json:"connections,omitempty" yaml:"connections"`
	Scenarios   []Load `json:"scenarios" yaml:"scenarios"`
}

// Load is one basic scenario of a workload.
type Load struct {
	Name string `json:"name" yaml:"name"`
	Kind string `json:"kind" yaml:"kind"`
	// Connections are the clients this scenario keeps open; for broadcast
	// they are also the receivers of every message.
	Connections int64 `json:"connections" yaml:"connections"`
	// Senders send one message each per SendInterval. Zero means every
	// connection for echo, send_to_connection and upstream_echo; the other
	// kinds must say.
	Senders      int64         `json:"senders,omitempty" yaml:"senders"`
	MessageSize  Size          `json:"message_size_bytes,omitempty" yaml:"message_size"` // zero means 2,048 bytes
	SendInterval time.Duration `json:"send_interval,omitempty" yaml:"send_interval"`     // zero means one second
	// GroupSize (members of the group each message goes to) or GroupCount
	// (connections split evenly into that many groups): send_to_group only.
	GroupSize  int64 `json:"group_size,omitempty" yaml:"group_size"`
	GroupCount int64 `json:"group_count,omitempty" yaml:"group_count"`
}

// FieldError is a workload value that fails validation; Path is the YAML
// key path such as "scenarios[1].senders".
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

func fieldErr(path, format string, args ...any) *FieldError {
	return &FieldError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// withDefaults returns a copy of w with every zero default filled in.
func (w Workload) withDefaults() Workload {
	if w.MaxLoad == 0 {
		w.MaxLoad = DefaultMaxLoad
	}
	w.Scenarios = slices.Clone(w.Scenarios)
	for i := range w.Scenarios {
		l := &w.Scenarios[i]
		if l.MessageSize == 0 {
			l.MessageSize = DefaultMessageSize
		}
		if l.SendInterval == 0 {
			l.SendInterval = DefaultSendInterval
		}
		if l.Senders == 0 && sendersDefaultToConnections(l.Kind) {
			l.Senders = l.Connections
		}
	}
	return w
}

func sendersDefaultToConnections(kind string) bool {
	return kind == KindEcho || kind == KindSendToConnection || kind == KindUpstreamEcho
}

func isREST(kind string) bool { return kind == KindRESTBroadcast || kind == KindRESTSendToUser }

// validate checks a workload whose defaults are filled in.
func (w Workload) validate(svc *service) *FieldError {
	switch {
	case len(w.Scenarios) == 0:
		return fieldErr("scenarios", "at least one scenario is required")
	case w.MaxLoad <= 0 || w.MaxLoad > 1:
		return fieldErr("max_load", "must be above 0 and at most 1, got %s", strconv.FormatFloat(w.MaxLoad, 'g', -1, 64))
	case w.Connections < 0:
		return fieldErr("connections", "must not be negative, got %d", w.Connections)
	}
	names := map[string]int{}
	var most int64
	for i, l := range w.Scenarios {
		path := yamldecode.IndexPath("scenarios", i)
		if first, dup := names[l.Name]; dup && l.Name != "" {
			return fieldErr(path+".name", "%q is already the name of scenarios[%d]", l.Name, first)
		}
		names[l.Name] = i
		if err := l.validate(path, svc); err != nil {
			return err
		}
		most = max(most, l.Connections)
	}
	if w.Connections != 0 && w.Connections < most {
		return fieldErr("connections", "%d is fewer than the %d connections of one scenario", w.Connections, most)
	}
	return nil
}

func (l Load) validate(path string, svc *service) *FieldError {
	switch {
	case l.Name == "":
		return fieldErr(path+".name", "is required")
	case l.Kind == "":
		return fieldErr(path+".kind", "is required (one of %v)", svc.kinds())
	case !slices.Contains(svc.kinds(), l.Kind):
		return fieldErr(path+".kind", "%q has no table in the %s; kinds with tables: %v", l.Kind, svc.source, svc.kinds())
	case l.Connections <= 0:
		return fieldErr(path+".connections", "must be at least 1, got %d", l.Connections)
	case l.Senders == 0:
		return fieldErr(path+".senders", "is required for kind %q", l.Kind)
	case l.Senders < 0:
		return fieldErr(path+".senders", "must be at least 1, got %d", l.Senders)
	case !isREST(l.Kind) && l.Senders > l.Connections:
		return fieldErr(path+".senders", "%d is more than the %d connections that could send", l.Senders, l.Connections)
	case l.MessageSize < 0:
		return fieldErr(path+".message_size", "must be positive, got %d", l.MessageSize)
	case l.SendInterval < 0:
		return fieldErr(path+".send_interval", "must be positive, got %s", l.SendInterval)
	}
	return l.validateGroup(path)
}

func (l Load) validateGroup(path string) *FieldError {
	if l.Kind != KindSendToGroup {
		switch {
		case l.GroupSize != 0:
			return fieldErr(path+".group_size", "only applies to kind %q", KindSendToGroup)
		case l.GroupCount != 0:
			return fieldErr(path+".group_count", "only applies to kind %q", KindSendToGroup)
		}
		return nil
	}
	switch {
	case (l.GroupSize == 0) == (l.GroupCount == 0):
		return fieldErr(path+".group_size", "give exactly one of group_size and group_count")
	case l.GroupSize < 0 || l.GroupSize > l.Connections:
		return fieldErr(path+".group_size", "must be between 1 and the %d connections, got %d", l.Connections, l.GroupSize)
	case l.GroupCount < 0 || l.GroupCount > l.Connections:
		return fieldErr(path+".group_count", "must be between 1 and the %d connections, got %d", l.Connections, l.GroupCount)
	}
	return nil
}

// receivers is how many connections receive each message of l.
func (l Load) receivers(fanout string) float64 {
	switch {
	case fanout == fanoutAll:
		return float64(l.Connections)
	case fanout == fanoutGroup && l.GroupSize > 0:
		return float64(l.GroupSize)
	case fanout == fanoutGroup:
		return float64(l.Connections) / float64(l.GroupCount)
	}
	return 1
}

// Names of the two group tables; send_to_group picks one by group size. The
// big-group table keeps a fixed number of groups (its group_count) whose
// size grows with the connections; the small-group table a fixed size.
const (
	TableSmallGroup = "send_to_small_group"
	TableBigGroup   = "send_to_big_group"
)

// table picks the guide's table that l is planned with.
func (l Load) table(svc *service) *scenario {
	if l.Kind == KindSendToGroup {
		if l.receivers(fanoutGroup) < SmallGroupBelow {
			return svc.scenario(TableSmallGroup)
		}
		return svc.scenario(TableBigGroup)
	}
	for _, sc := range svc.scenarios {
		if sc.kind == l.Kind {
			return sc
		}
	}
	return nil // validate rejects kinds without a table
}

// kinds lists the workload kinds the service has tables for.
func (s *service) kinds() []string {
	var out []string
	for _, sc := range s.scenarios {
		if !slices.Contains(out, sc.kind) {
			out = append(out, sc.kind)
		}
	}
	return out
}
