//go:build linux

package rawsock

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pair is a loopback TCP connection, both ends wrapped.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	client, server = Wrap(c), Wrap(s)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestWrapTakesOnlyTCP(t *testing.T) {
	client, _ := pair(t)
	if _, ok := client.(*Conn); !ok {
		t.Fatalf("a TCP connection came back as %T", client)
	}
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if got := Wrap(p); got != p {
		t.Fatalf("a pipe came back as %T, want it unchanged", got)
	}
}

// A write far larger than the socket buffers waits for room (EAGAIN) and
// still delivers every byte in order, both ways at once.
func TestLargeWritesArriveWhole(t *testing.T) {
	client, server := pair(t)
	up, down := randomBytes(8<<20, 1), randomBytes(6<<20, 2)
	gotUp, gotDown := make(chan []byte, 1), make(chan []byte, 1)
	go func() { gotUp <- readN(server, len(up)) }()
	go func() { gotDown <- readN(client, len(down)) }()
	errs := make(chan error, 2)
	go func() { errs <- writeAll(client, up) }()
	go func() { errs <- writeAll(server, down) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(<-gotUp, up) || !bytes.Equal(<-gotDown, down) {
		t.Fatal("bytes differ from what was written")
	}
}

func writeAll(c net.Conn, p []byte) error {
	n, err := c.Write(p)
	if err == nil && n != len(p) {
		return errors.New("short write without an error")
	}
	return err
}

func readN(c net.Conn, n int) []byte {
	buf := make([]byte, n)
	got, _ := io.ReadFull(c, buf)
	return buf[:got]
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestReadEndsWithEOFAfterThePeerCloses(t *testing.T) {
	client, server := pair(t)
	if _, err := server.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	server.Close()
	got, err := io.ReadAll(client)
	if err != nil || string(got) != "last words" {
		t.Fatalf("read %q, %v; want the bytes, then EOF", got, err)
	}
	if n, err := client.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("a read after the end: %d, %v; want 0, EOF", n, err)
	}
}

func TestReadStopsAtItsDeadline(t *testing.T) {
	client, _ := pair(t)
	if err := client.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := client.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing to read: %v; want a deadline timeout", err)
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Fatalf("returned after %v, before its deadline", waited)
	}
}

func TestWriteStopsAtItsDeadline(t *testing.T) {
	client, _ := pair(t) // the server end never reads
	if err := client.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	n, err := client.Write(make([]byte, 64<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write the peer never reads: %v; want a deadline timeout", err)
	}
	if n == 0 || n == 64<<20 {
		t.Fatalf("wrote %d bytes; want the part the buffers took", n)
	}
}

func TestWriteToAResetPeerFails(t *testing.T) {
	client, server := pair(t)
	resetOnClose(t, server)
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		_, err = client.Write([]byte("anyone there?"))
		time.Sleep(10 * time.Millisecond)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "write" || !(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) ||
		!strings.Contains(err.Error(), "->"+op.Addr.String()+": write: ") {
		t.Fatalf("writes to a reset peer: %v; want a write error of ECONNRESET or EPIPE", err)
	}
}

func TestReadFromAResetPeerFails(t *testing.T) {
	client, server := pair(t)
	resetOnClose(t, server)
	_, err := client.Read(make([]byte, 8))
	var op *net.OpError
	want := "read tcp " + client.LocalAddr().String() + "->" + client.RemoteAddr().String() + ": read: connection reset by peer"
	if !errors.As(err, &op) || op.Op != "read" || !errors.Is(err, syscall.ECONNRESET) || err.Error() != want {
		t.Fatalf("read from a reset peer: %v; want the net package's %q", err, want)
	}
}

// resetOnClose closes c with a reset rather than an orderly end.
func resetOnClose(t *testing.T, c net.Conn) {
	t.Helper()
	if err := c.(*Conn).SetLinger(0); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestEmptyReadAndWriteReturnAtOnce(t *testing.T) {
	client, _ := pair(t)
	if n, err := client.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	if n, err := client.Write(nil); n != 0 || err != nil {
		t.Fatalf("empty write: %d, %v", n, err)
	}
}

// Listener's accepted connections and Dialer's dialled ones are wrapped,
// both ends of one connection; a dial that fails fails as it was.
func TestListenerAndDialerWrapTheirConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wrapped := Listener(ln)
	defer wrapped.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := wrapped.Accept()
		accepted <- c
	}()
	dialled, err := Dialer(nil)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialled.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	defer server.Close()
	_, serverRaw := server.(*Conn)
	_, clientRaw := dialled.(*Conn)
	if !serverRaw || !clientRaw {
		t.Fatalf("accepted a %T, dialled a %T; want raw sockets", server, dialled)
	}
	if _, err := dialled.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got := readN(server, 5); string(got) != "hello" {
		t.Fatalf("read %q through the accepted connection", got)
	}

	refused := errors.New("refused by the test")
	failing := Dialer(func(context.Context, string, string) (net.Conn, error) { return nil, refused })
	if c, err := failing(context.Background(), "tcp", "127.0.0.1:1"); c != nil || !errors.Is(err, refused) {
		t.Fatalf("a failing dial gave %v, %v; want nil and its own error", c, err)
	}
}

// A message's read and write are on every message's path, probe and hub:
// neither may allocate.
func TestReadAndWriteAllocateNothing(t *testing.T) {
	client, server := pair(t)
	msg, buf := []byte("ping"), make([]byte, 16)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := client.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(server, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a write and a read allocate %.1f times, want 0", allocs)
	}
}

// Writers in turn on one connection, each write large enough to wait for
// room: every write arrives whole, never interleaved with another's.
func TestConcurrentWritesArriveWhole(t *testing.T) {
	client, server := pair(t)
	const writers, writes, size = 4, 16, 256 << 10
	errs := make(chan error, writers)
	for w := range writers {
		block := bytes.Repeat([]byte{byte('a' + w)}, size)
		go func() {
			for range writes {
				if err := writeAll(client, block); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	got := readN(server, writers*writes*size)
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != writers*writes*size {
		t.Fatalf("read %d bytes, want %d", len(got), writers*writes*size)
	}
	for i := 0; i < len(got); i += size {
		if bytes.Count(got[i:i+size], got[i:i+1]) != size {
			t.Fatalf("write %d arrived interleaved with another", i/size)
		}
	}
}
