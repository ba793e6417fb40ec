package webpubsubclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/clientconn/clientconntest"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// recordingObserver keeps everything a connection reports.
type recordingObserver struct {
	clientconntest.Timings
	mu       sync.Mutex
	codes    []string
	sent     atomic.Int64
	received atomic.Int64
}

func (o *recordingObserver) HTTPResponse(endpoint string, code int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.codes = append(o.codes, fmt.Sprintf("%s %d", endpoint, code))
}

func (o *recordingObserver) BytesSent(n int)     { o.sent.Add(int64(n)) }
func (o *recordingObserver) BytesReceived(n int) { o.received.Add(int64(n)) }

func (o *recordingObserver) responses() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.codes, ",")
}

// inbox collects delivered messages, copying their data.
type inbox struct{ ch chan Message }

func newInbox() *inbox { return &inbox{ch: make(chan Message, 1024)} }

func (in *inbox) handler(m Message) {
	m.Data = bytes.Clone(m.Data)
	in.ch <- m
}

func (in *inbox) next(t *testing.T) Message {
	t.Helper()
	select {
	case m := <-in.ch:
		return m
	case <-time.After(3 * time.Second):
		t.Fatal("no message within 3s")
		return Message{}
	}
}

// quiet fails t when a message arrives within d.
func (in *inbox) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-in.ch:
		t.Errorf("unexpected message %+v", m)
	case <-time.After(d):
	}
}

func TestDialWaitsForConnectedAndSendsTheTokenAndSubprotocol(t *testing.T) {
	for _, proto := range []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable} {
		t.Run(proto, func(t *testing.T) {
			svc := newTestService(t, newMiniHub().serve)
			obs := &recordingObserver{}
			o := svc.options("user-1", proto)
			o.Observer = obs
			c := svc.dial(t, o)
			if c.ConnectionID() != "conn-1" || c.UserID() != "user-1" || c.Protocol() != proto {
				t.Errorf("connection %q user %q protocol %q", c.ConnectionID(), c.UserID(), c.Protocol())
			}
			r := svc.requests()[0]
			if got := r.Header.Get("Sec-WebSocket-Protocol"); got != proto {
				t.Errorf("offered subprotocols %q, want only %s", got, proto)
			}
			if ext := r.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
				t.Errorf("offered extensions %q; compression must stay off", ext)
			}
			if r.URL.Query().Get("access_token") != o.AccessToken {
				t.Error("the token did not travel as access_token")
			}
			connected := `{"type":"system","event":"connected","userId":"user-1","connectionId":"conn-1","reconnectionToken":"reconnect-secret"}`
			if got := obs.received.Load(); got != int64(len(connected)) {
				t.Errorf("BytesReceived %d, want the connected frame's %d", got, len(connected))
			}
			if got := obs.responses(); got != "upgrade 101" {
				t.Errorf("observer saw %q", got)
			}
		})
	}
}

func TestJoinSendAndReceiveOnBothProtocols(t *testing.T) {
	for _, proto := range []string{webpubsub.ProtocolJSON, webpubsub.ProtocolJSONReliable} {
		t.Run(proto, func(t *testing.T) {
			hub := newMiniHub()
			svc := newTestService(t, hub.serve)
			inA, inB := newInbox(), newInbox()
			oa, ob := svc.options("alice", proto), svc.options("bob", proto)
			oa.OnGroupMessage, ob.OnGroupMessage = inA.handler, inB.handler
			oa.SequenceAckInterval, ob.SequenceAckInterval = 20*time.Millisecond, 20*time.Millisecond
			a, b := svc.dial(t, oa), svc.dial(t, ob)
			ctx := context.Background()
			for _, c := range []*Conn{a, b} {
				if err := c.JoinGroup(ctx, "g1"); err != nil {
					t.Fatal(err)
				}
			}
			sends := []struct {
				dataType webpubsub.DataType
				data     string
			}{{webpubsub.DataTypeJSON, `{"n":1,"s":"x"}`}, {webpubsub.DataTypeText, "héllo \"w\""}, {webpubsub.DataTypeBinary, "\x00\xff\x10"}}
			for _, s := range sends {
				if err := a.SendToGroup(ctx, "g1", s.dataType, []byte(s.data), WaitAck); err != nil {
					t.Fatal(err)
				}
			}
			wantSeq := map[bool]uint64{false: 0, true: 1}[webpubsub.IsReliable(proto)]
			for i, s := range sends {
				for _, in := range []*inbox{inA, inB} {
					m := in.next(t)
					if m.Group != "g1" || m.FromUserID != "alice" || m.DataType != s.dataType || string(m.Data) != s.data || m.SequenceID != wantSeq*uint64(i+1) {
						t.Errorf("message %d = %+v (data %q), want %v %q seq %d", i, m, m.Data, s.dataType, s.data, wantSeq*uint64(i+1))
					}
				}
			}
			checkNoEchoAndLeave(t, a, b, inA, inB)
			// Each received 4 messages; the reliable protocol acknowledges
			// them, the plain one has nothing to acknowledge.
			for _, c := range []*Conn{a, b} {
				if got, want := lastSequenceAck(hub, c.ConnectionID()), 4*wantSeq; got != want {
					t.Errorf("%s: last sequenceAck %d, want %d", c.ConnectionID(), got, want)
				}
			}
		})
	}
}

// lastSequenceAck waits briefly for connID's acks to settle and returns
// the last one, 0 when none came.
func lastSequenceAck(hub *miniHub, connID string) uint64 {
	var last uint64
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if acks := hub.sequenceAcks(connID); len(acks) > 0 {
			last = acks[len(acks)-1]
		}
	}
	return last
}

// checkNoEchoAndLeave: a noEcho send reaches the other member only, and a
// member that left gets nothing.
func checkNoEchoAndLeave(t *testing.T, a, b *Conn, inA, inB *inbox) {
	t.Helper()
	ctx := context.Background()
	if err := a.SendToGroup(ctx, "g1", webpubsub.DataTypeText, []byte("quiet"), NoEcho|WaitAck); err != nil {
		t.Fatal(err)
	}
	if m := inB.next(t); string(m.Data) != "quiet" {
		t.Errorf("b got %q", m.Data)
	}
	inA.quiet(t, 100*time.Millisecond)
	if err := b.LeaveGroup(ctx, "g1"); err != nil {
		t.Fatal(err)
	}
	if err := a.SendToGroup(ctx, "g1", webpubsub.DataTypeText, []byte("after"), WaitAck); err != nil {
		t.Fatal(err)
	}
	if m := inA.next(t); string(m.Data) != "after" {
		t.Errorf("a got %q", m.Data)
	}
	inB.quiet(t, 100*time.Millisecond)
}

func TestEventComesBackAsServerMessage(t *testing.T) {
	svc := newTestService(t, newMiniHub().serve)
	in := newInbox()
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.OnServerMessage = in.handler
	c := svc.dial(t, o)
	if err := c.SendEvent(context.Background(), "echo", webpubsub.DataTypeJSON, []byte(`[1,2]`), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SendEvent(context.Background(), "echo", webpubsub.DataTypeBinary, []byte{9, 8}, WaitAck); err != nil {
		t.Fatal(err)
	}
	if m := in.next(t); m.Group != "" || m.DataType != webpubsub.DataTypeJSON || string(m.Data) != `[1,2]` {
		t.Errorf("first echo %+v", m)
	}
	if m := in.next(t); m.DataType != webpubsub.DataTypeBinary || !bytes.Equal(m.Data, []byte{9, 8}) {
		t.Errorf("second echo %+v", m)
	}
	if err := c.SendEvent(context.Background(), "echo", webpubsub.DataTypeText, nil, NoEcho); err == nil {
		t.Error("NoEcho on an event accepted")
	}
}

func TestAckErrorsAreTypedAndDuplicateIsSuccess(t *testing.T) {
	svc := newTestService(t, newMiniHub().serve)
	c := svc.dial(t, svc.options("u", webpubsub.ProtocolJSON))
	ctx := context.Background()
	if err := c.JoinGroup(ctx, "dup"); err != nil {
		t.Errorf("Duplicate ack: %v, want success", err)
	}
	cases := []struct {
		group string
		is    error
		name  string
	}{{"forbidden", ErrForbidden, webpubsub.ErrorForbidden}, {"ise", ErrInternalServerError, webpubsub.ErrorInternalServerError}, {"later", nil, "Timeout"}}
	for _, k := range cases {
		err := c.JoinGroup(ctx, k.group)
		var ae *AckError
		if !errors.As(err, &ae) || ae.Name != k.name || ae.Op != "join group" || ae.Message != scriptedAckErrors[k.group].Message {
			t.Errorf("join %s: %v, want an AckError %s", k.group, err, k.name)
		}
		for _, sentinel := range []error{ErrForbidden, ErrInternalServerError, ErrInvocationFailed} {
			if got := errors.Is(err, sentinel); got != (sentinel == k.is) {
				t.Errorf("join %s: errors.Is(%v) = %v", k.group, sentinel, got)
			}
		}
	}
	// A refused request leaves the connection usable.
	if err := c.JoinGroup(ctx, "fine"); err != nil || c.Err() != nil {
		t.Errorf("join after refusals: %v (conn %v)", err, c.Err())
	}
}

func TestRolesMissingIsForbidden(t *testing.T) {
	svc := newTestService(t, newMiniHub().serve)
	o := svc.options("u", webpubsub.ProtocolJSON)
	o.AccessToken = svc.token("u")
	c := svc.dial(t, o)
	if err := c.JoinGroup(context.Background(), "g"); !errors.Is(err, ErrForbidden) {
		t.Errorf("join without the role: %v", err)
	}
	err := c.SendToGroup(context.Background(), "g", webpubsub.DataTypeText, []byte("x"), WaitAck)
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "send to group") {
		t.Errorf("send without the role: %v", err)
	}
}

func TestInvalidDataIsTheCallersErrorOnly(t *testing.T) {
	svc := newTestService(t, newMiniHub().serve)
	c := svc.dial(t, svc.options("u", webpubsub.ProtocolJSON))
	ctx := context.Background()
	for _, bad := range []error{
		c.SendToGroup(ctx, "g", webpubsub.DataTypeJSON, []byte(`{"a":`), 0),
		c.SendToGroup(ctx, "g", webpubsub.DataType(7), []byte(`x`), WaitAck),
		c.SendToGroup(ctx, "", webpubsub.DataTypeText, []byte(`x`), 0),
		c.SendEvent(ctx, "", webpubsub.DataTypeText, []byte(`x`), 0),
		c.JoinGroup(ctx, ""),
		c.LeaveGroup(ctx, ""),
	} {
		if bad == nil {
			t.Error("an invalid request was accepted")
		}
	}
	if err := c.JoinGroup(ctx, "g"); err != nil || c.Err() != nil {
		t.Errorf("connection hurt by invalid requests: %v, %v", err, c.Err())
	}
}

func TestCloseIsCleanAndEndsCalls(t *testing.T) {
	codes := make(chan int, 1)
	svc := newTestService(t, func(s *svcConn) {
		if s.connected() == nil {
			codes <- s.closeCode()
		}
	})
	c := svc.dial(t, svc.options("u", webpubsub.ProtocolJSON))
	if err := c.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if code := <-codes; code != 1000 {
		t.Errorf("service saw close code %d, want 1000", code)
	}
	if err := c.JoinGroup(context.Background(), "g"); !errors.Is(err, clientconn.ErrClosed) {
		t.Errorf("JoinGroup after Close: %v", err)
	}
	if err := c.Close(context.Background()); err != nil || c.Err() != nil {
		t.Errorf("second Close %v, Err %v", err, c.Err())
	}
}
