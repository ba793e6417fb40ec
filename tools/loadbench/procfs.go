package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// rssBytes is the resident set size of a process, from /proc/PID/status.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	kb, err := statusField(b, "VmRSS:")
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w (the process has exited)", pid, err)
	}
	return kb * 1024, nil
}

// cpuSeconds is the user+sys time a live process has used so far. It sums
// the scheduler's per-thread run time (nanoseconds) instead of the
// clock-tick utime+stime of /proc/PID/stat, so that short windows still
// measure more than zero.
func cpuSeconds(pid int) (float64, error) {
	ns, err := sumOverThreads(pid, "schedstat", func(b []byte) (int64, error) {
		first, _, _ := strings.Cut(string(b), " ")
		return strconv.ParseInt(first, 10, 64)
	})
	return float64(ns) / 1e9, err
}

// voluntarySwitches is how often a live process's threads gave up the CPU
// to wait (on a futex, in epoll, asleep), from each thread's status: every
// one is a wake-up paid later.
func voluntarySwitches(pid int) (int64, error) {
	return sumOverThreads(pid, "status", func(b []byte) (int64, error) {
		return statusField(b, "voluntary_ctxt_switches:")
	})
}

// sumOverThreads adds up value of /proc/PID/task/*/file over a live
// process's threads. Go processes do not retire their threads, so nothing
// is lost with an exited one.
func sumOverThreads(pid int, file string, value func([]byte) (int64, error)) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/%s", pid, file))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("pid %d: no thread %s (the process has exited)", pid, file)
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended between the glob and the read
		}
		v, err := value(b)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		sum += v
	}
	return sum, nil
}

// statusField is the number after key in a /proc status file, in the
// file's unit (kB for sizes).
func statusField(b []byte, key string) (int64, error) {
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
			return strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s line", key)
}

// machineBusySeconds is the CPU time all cores have spent busy since boot,
// from the first line of /proc/stat (user, nice, system, irq, softirq and
// steal; guest time is already inside user).
func machineBusySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		ticks += v
	}
	return float64(ticks) / clockTicksPerSecond, nil
}

// clockTicksPerSecond is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicksPerSecond = 100

// fdCount is how many file descriptors a process holds; reading the
// directory costs a few system calls however many there are.
func fdCount(pid int) (int, error) {
	d, err := os.Open(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names), err
}

// socketCount is how many of a process's descriptors are sockets. It reads
// every link, so it is only called when fdCount says it may matter.
func socketCount(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n, nil
}
