package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A --web.listen-address another process holds fails the daemon at once,
// before it starts anything: exit 1, and the one line on stderr names the
// address and why. Nothing of the daemon ran, so nothing else is logged.
func TestServeFailsAtOnceOnATakenWebAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	code, out, errOut := runCLI(t, ctx, "--web.listen-address", addr)
	took := time.Since(began)
	want := "hubprobe: --web.listen-address " + addr + ": listen tcp " + addr + ": bind: " + addressTaken + "\n"
	if code != exitFailed || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and only %q", code, out, errOut, want)
	}
	if took > time.Second {
		t.Errorf("took %v to fail, want at once", took.Round(time.Millisecond))
	}
}

// A bad configuration file is what the user hears of first, even when the
// web address is taken too: the file is read before the address is
// claimed, and with exit 2.
func TestServeReportsABadFileBeforeATakenAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	bad := writeConfig(t, "targets: [\n")
	code, _, errOut := runCLI(t, context.Background(), "--config.file", bad, "--web.listen-address", taken.Addr().String())
	if code != exitUsage || !strings.HasPrefix(errOut, "hubprobe: bad configuration: "+bad) || strings.Contains(errOut, addressTaken) {
		t.Errorf("exit %d, stderr %q; want exit 2 for the file alone", code, errOut)
	}
}

// Of several --web.listen-address, a taken one fails the command and
// releases those it had claimed before.
func TestServeReleasesItsWebAddressesWhenOneIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for attempt := 1; attempt <= portAttempts; attempt++ {
		first := freePort(t)
		code, _, errOut := runCLI(t, context.Background(), "--web.listen-address", first, "--web.listen-address", taken.Addr().String())
		if strings.Contains(errOut, first) {
			continue // another process took the first address meanwhile
		}
		if code != exitFailed || !strings.Contains(errOut, taken.Addr().String()) {
			t.Fatalf("exit %d, stderr %q; want 1 naming the taken address", code, errOut)
		}
		l, err := net.Listen("tcp", first)
		if err != nil {
			t.Fatalf("the first address is still held after the command failed: %v", err)
		}
		l.Close()
		return
	}
	t.Fatalf("every first address was taken by another process in %d attempts", portAttempts)
}
