package aspnet

import (
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/internal/jsonscan"
)

// Invocation is a hub method call: from the client {"H","M","A","I"} (and
// S, the round-tripped state), or from the hub inside an envelope's
// messages {"H","M","A"}, which carries no id.
type Invocation struct {
	Hub    string
	Method string
	// Args (A) are the arguments, each as its JSON text.
	Args []json.RawMessage
	// ID (I) is the client's callback id; HasID when present. The
	// JavaScript client sends it as a number, NumericID then.
	ID        string
	HasID     bool
	NumericID bool
	// State (S) is the round-tripped hub state object, nil when absent.
	State json.RawMessage
}

// DecodeInvocation decodes one invocation into inv, reusing the capacity
// of inv.Args, and inv's hub and method names when the same names come
// again (as they do message after message). H and M must be non-empty
// strings; A, when present, an array; I a string or a number. Raw values
// alias data.
func DecodeInvocation(data []byte, inv *Invocation) error {
	lastHub, lastMethod := inv.Hub, inv.Method
	*inv = Invocation{Args: inv.Args[:0]}
	var m members
	if err := scanMembers(data, &m); err != nil {
		return err
	}
	var err error
	if inv.Hub, err = m.internedMember('H', lastHub); err != nil {
		return err
	}
	if inv.Method, err = m.internedMember('M', lastMethod); err != nil {
		return err
	}
	if inv.Hub == "" || inv.Method == "" {
		return fmt.Errorf("%w: an invocation needs a hub (H) and a method (M)", ErrProtocol)
	}
	if err := inv.idFromMembers(&m); err != nil {
		return err
	}
	inv.State = m.rawMember('S')
	if args := m.rawMember('A'); args != nil {
		inv.Args, err = arrayElements(inv.Args, args, 'A')
	}
	return err
}

func (inv *Invocation) idFromMembers(m *members) error {
	id, numeric, err := idMember(m)
	inv.ID, inv.NumericID, inv.HasID = id, numeric, m.rawMember('I') != nil
	return err
}

// idMember reads I, a string or (as the JavaScript client sends callback
// ids) a number, whose text is the id.
func idMember(m *members) (id string, numeric bool, err error) {
	v := m.rawMember('I')
	switch {
	case v == nil:
		return "", false, nil
	case v[0] == '"':
		id, err = m.stringMember('I')
		return id, false, err
	case jsonscan.BeginsNumber(v[0]):
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("%w: \"I\" must be a string or a number", ErrProtocol)
}

// AppendInvocation appends inv as its senders write it: H, M, A, then I
// and S when present.
func AppendInvocation(dst []byte, inv *Invocation) []byte {
	start := len(dst)
	dst = append(dst, '{')
	dst = appendStringMember(dst, start, 'H', inv.Hub)
	dst = appendStringMember(dst, start, 'M', inv.Method)
	dst = appendMemberName(dst, start, 'A')
	dst = appendRawArray(dst, inv.Args)
	if inv.HasID {
		dst = appendID(dst, start, inv.ID, inv.NumericID)
	}
	if inv.State != nil {
		dst = appendRawMember(dst, start, 'S', inv.State)
	}
	return append(dst, '}')
}

func appendID(dst []byte, start int, id string, numeric bool) []byte {
	if numeric {
		dst = appendMemberName(dst, start, 'I')
		return append(dst, id...)
	}
	return appendStringMember(dst, start, 'I', id)
}

// HubResult is the hub's answer to an invocation (HubResponse): a result,
// a progress update, or an error.
type HubResult struct {
	// ID (I) is the invocation's id; a progress update's is "P|" and the id.
	ID string
	// State (S) is the changed hub state, nil when absent.
	State json.RawMessage
	// Result (R) is the method's return value, nil when the method returned
	// nothing or null (the server leaves null out).
	Result json.RawMessage
	// Progress (P) is {"I": id, "D": data}; HasProgress when present.
	ProgressID   string
	ProgressData json.RawMessage
	HasProgress  bool
	// HubException (H:true) marks an error the hub raised on purpose.
	HubException bool
	// Error (E) is the error's message, HasError when present.
	Error    string
	HasError bool
	// StackTrace (T), sent only with detailed errors on.
	StackTrace string
	// ErrorData (D) is a HubException's extra data, nil when absent.
	ErrorData json.RawMessage
}

// DecodeHubResult decodes a frame that must be a hub result.
func DecodeHubResult(data []byte, r *HubResult) error {
	var m members
	if err := scanMembers(data, &m); err != nil {
		return err
	}
	if !m.has('I') {
		return fmt.Errorf("%w: a hub result needs an id (I)", ErrProtocol)
	}
	return r.fromMembers(&m)
}

func (r *HubResult) fromMembers(m *members) (err error) {
	*r = HubResult{State: m.rawMember('S'), Result: m.rawMember('R'), ErrorData: m.rawMember('D')}
	if r.ID, _, err = idMember(m); err != nil {
		return err
	}
	if r.Error, err = m.stringMember('E'); err != nil {
		return err
	}
	r.HasError = m.rawMember('E') != nil
	if r.StackTrace, err = m.stringMember('T'); err != nil {
		return err
	}
	if err := r.hubExceptionFromMembers(m); err != nil {
		return err
	}
	return r.progressFromMembers(m)
}

func (r *HubResult) hubExceptionFromMembers(m *members) error {
	switch v := string(m.rawMember('H')); v {
	case "", "false":
	case "true":
		r.HubException = true
	default:
		return fmt.Errorf("%w: \"H\" must be true or false", ErrProtocol)
	}
	return nil
}

func (r *HubResult) progressFromMembers(m *members) error {
	p := m.rawMember('P')
	if p == nil {
		return nil
	}
	var inner members
	if err := scanMembers(p, &inner); err != nil {
		return fmt.Errorf("%w: \"P\" must be an object", ErrProtocol)
	}
	id, _, err := idMember(&inner)
	r.ProgressID, r.ProgressData, r.HasProgress = id, inner.rawMember('D'), true
	return err
}

// AppendHubResult appends r as the server's HubResponse is written: S, R,
// I, P, H, E, T, D, each only when set (I always, as a string).
func AppendHubResult(dst []byte, r *HubResult) []byte {
	start := len(dst)
	dst = append(dst, '{')
	if r.State != nil {
		dst = appendRawMember(dst, start, 'S', r.State)
	}
	if r.Result != nil {
		dst = appendRawMember(dst, start, 'R', r.Result)
	}
	dst = appendStringMember(dst, start, 'I', r.ID)
	if r.HasProgress {
		dst = appendProgress(dst, start, r)
	}
	if r.HubException {
		dst = appendMemberName(dst, start, 'H')
		dst = append(dst, "true"...)
	}
	if r.HasError {
		dst = appendStringMember(dst, start, 'E', r.Error)
	}
	if r.StackTrace != "" {
		dst = appendStringMember(dst, start, 'T', r.StackTrace)
	}
	if r.ErrorData != nil {
		dst = appendRawMember(dst, start, 'D', r.ErrorData)
	}
	return append(dst, '}')
}

func appendProgress(dst []byte, start int, r *HubResult) []byte {
	dst = appendMemberName(dst, start, 'P')
	inner := len(dst)
	dst = append(dst, '{')
	dst = appendStringMember(dst, inner, 'I', r.ProgressID)
	dst = appendMemberName(dst, inner, 'D')
	return append(appendRaw(dst, r.ProgressData), '}')
}

// ProgressID returns the id of a progress update for invocation id.
func ProgressID(id string) string { return "P|" + id }
