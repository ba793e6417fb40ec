package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// helpCase is one way of asking for help and what the help must show: its
// usage line and the flags of the command.
type helpCase struct {
	args  []string
	usage string
	flags []string
}

var (
	rootFlags  = []string{"--config.file", "--log.level", "--log.format", "--version", "--help"}
	serveFlags = []string{"--web.listen-address", "--web.config.file", "--shard.index", "--shard.count",
		"--capacity.prometheus-url", "--capacity.prometheus-wait"}
	runFlagsOf = []string{"--scenario", "--output", "--plot.file", "--shard.index", "--shard.count"}
	hubFlagsOf = []string{"--listen", "--metrics", "--delivery-delay", "--access-key-file", "--units",
		"--connection-quota", "--message-rate-limit", "--redirect-negotiate", "--poll-timeout", "--webpubsub.event-handler",
		"--entra.issuer", "--disable-local-auth"}
	planFlagsOf = []string{"--workload.file", "--output"}
	benchFlags  = []string{"--output", "--import"}
	sloFlags    = []string{"--format"}
)

// helpCases ask every command for help, in each way kingpin offers.
var helpCases = []helpCase{
	{[]string{"--help"}, "usage: hubprobe [<flags>] <command>", rootFlags},
	{[]string{"-h"}, "usage: hubprobe [<flags>] <command>", rootFlags},
	{[]string{"help"}, "usage: hubprobe [<flags>] <command>", rootFlags},
	{[]string{"serve", "--help"}, "usage: hubprobe serve", append(serveFlags, rootFlags...)},
	{[]string{"run", "--help"}, "usage: hubprobe run", append(runFlagsOf, rootFlags...)},
	{[]string{"hub", "--help"}, "usage: hubprobe hub", append(hubFlagsOf, rootFlags...)},
	{[]string{"--log.level=debug", "hub", "-h"}, "usage: hubprobe hub", hubFlagsOf},
	{[]string{"help", "hub"}, "usage: hubprobe hub", hubFlagsOf},
	{[]string{"check", "--help"}, "usage: hubprobe check", rootFlags},
	{[]string{"plan", "--help"}, "usage: hubprobe plan", append(planFlagsOf, rootFlags...)},
	{[]string{"bench", "--help"}, "usage: hubprobe bench", append(benchFlags, rootFlags...)},
	{[]string{"slo", "--help"}, "usage: hubprobe slo", append(sloFlags, rootFlags...)},
	{[]string{"help", "help"}, "usage: hubprobe help", nil},
}

// listenAddrs are where a command that started despite --help would
// listen: the hub's and the daemon's defaults, and port 80, where a hub
// whose defaults were never applied listened.
var listenAddrs = []string{"127.0.0.1:5050", "127.0.0.1:9754", "127.0.0.1:80"}

func accepts(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		conn.Close()
	}
	return err == nil
}

// runBinary runs hubprobe with args; it must exit by itself within 2 s.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin := hubprobeBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = t.TempDir(), &out, &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after 2 s, killed\nstdout: %s\nstderr: %s", args, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), err
}

// --help prints the help on stdout and exits 0, doing nothing else: no
// command runs, nothing listens, nothing is logged.
func TestHelpPrintsHelpAndExitsZeroForEveryCommand(t *testing.T) {
	busy := map[string]bool{}
	for _, addr := range listenAddrs {
		busy[addr] = accepts(addr)
	}
	for _, c := range helpCases {
		stdout, stderr, err := runBinary(t, c.args...)
		if err != nil || stderr != "" || !strings.HasPrefix(stdout, c.usage) {
			t.Errorf("%v: %v, stderr %q, stdout:\n%s\nwant exit 0, nothing on stderr and help starting %q", c.args, err, stderr, stdout, c.usage)
		}
		for _, flag := range c.flags {
			name := strings.TrimPrefix(flag, "--") // a boolean flag shows as --[no-]name
			if !strings.Contains(stdout, flag) && !strings.Contains(stdout, "--[no-]"+name) {
				t.Errorf("%v: help does not name %s", c.args, flag)
			}
		}
		for _, addr := range listenAddrs {
			if !busy[addr] && accepts(addr) {
				t.Errorf("%v: something listens on %s afterwards", c.args, addr)
			}
		}
	}
	for addr, b := range busy {
		if b {
			t.Logf("%s was in use before the test: whether hubprobe listened there is not known", addr)
		}
	}
}

// Every command of the root help has a case above, so a new command cannot
// go without its --help test.
func TestHelpCasesCoverEveryCommand(t *testing.T) {
	stdout, _, err := runBinary(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	_, commands, found := strings.Cut(stdout, "\nCommands:\n")
	if !found {
		t.Fatalf("root help lists no commands:\n%s", stdout)
	}
	var listed []string
	for _, line := range strings.Split(commands, "\n") {
		if name, _, _ := strings.Cut(strings.TrimSpace(line), " "); name != "" && !strings.HasPrefix(line, "    ") {
			listed = append(listed, strings.TrimSuffix(name, "*")) // * marks the default command
		}
	}
	var tested []string
	for _, c := range helpCases {
		for _, a := range c.args {
			if !strings.HasPrefix(a, "-") && !slices.Contains(tested, a) {
				tested = append(tested, a)
			}
		}
	}
	slices.Sort(listed)
	slices.Sort(tested)
	if !slices.Equal(listed, tested) || len(listed) != 8 {
		t.Errorf("commands %v, tested for --help %v; want the same eight", listed, tested)
	}
}

func TestVersionPrintsTheBuildAndExitsZero(t *testing.T) {
	stdout, stderr, err := runBinary(t, "--version")
	want := "hubprobe " + testVersion + " (revision "
	if err != nil || stderr != "" || !strings.HasPrefix(stdout, want) || !strings.HasSuffix(stdout, ", "+runtime.Version()+")\n") {
		t.Errorf("--version: %v, stderr %q, stdout %q; want exit 0 and %q…%s)", err, stderr, stdout, want, runtime.Version())
	}
}
