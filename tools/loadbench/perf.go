package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// perfRecorder attaches `perf record` (call graphs from frame pointers,
// which Go keeps) to a pair's client and server for the measured window,
// writing DIR/<pair>-<client|server>.perf.data.
func perfRecorder(dir, pair string, progress io.Writer) func(clientPID, serverPID int, d time.Duration) func() {
	return func(clientPID, serverPID int, d time.Duration) func() {
		// perf takes a moment to start, and ends with status 143 when its
		// target exits first, so it records a little less than the window.
		d -= min(time.Second, d/10)
		var recorders []*child
		var files []string
		for _, target := range []struct {
			role string
			pid  int
		}{{"client", clientPID}, {"server", serverPID}} {
			out := filepath.Join(dir, pair+"-"+target.role+".perf.data")
			argv := []string{"perf", "record", "-q", "-F", "999", "-g", "-o", out,
				"-p", strconv.Itoa(target.pid), "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64)}
			c, err := startChild("perf record "+pair+" "+target.role, argv, io.Discard)
			if err != nil {
				fmt.Fprintln(progress, "loadbench:", err)
				continue
			}
			recorders, files = append(recorders, c), append(files, out)
		}
		return func() {
			for i, c := range recorders {
				select {
				case <-c.done:
				case <-time.After(10 * time.Second):
					c.stop(5 * time.Second)
				}
				if st, err := os.Stat(files[i]); err != nil || st.Size() == 0 {
					fmt.Fprintln(progress, "loadbench: no perf data:", c.failure())
				}
			}
		}
	}
}
