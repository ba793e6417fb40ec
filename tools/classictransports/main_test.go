package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/probe/aspnetclient"
)

// The experiment runs on every transport of both hubs, each batch's last
// item arriving as its n-th (timeDown fails otherwise).
func TestExperimentTimesEveryTransport(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, "", 20, 2); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2+7 {
		t.Fatalf("%d lines, want a header and 7 rows:\n%s", len(lines), out.String())
	}
	for _, line := range lines[2:] {
		if cells := strings.Split(line, "|"); len(cells) != 6 || strings.Count(cells[3], ",") != 1 || strings.Count(cells[4], ",") != 1 {
			t.Errorf("row %q has not 2 times down and 2 up", line)
		}
	}
}

// BatchTest takes a count from 1 to the connection's message buffer.
func TestBatchTestRefusesCountsOutOfRange(t *testing.T) {
	origin, stop, err := startHub()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := aspnetclient.Dial(ctx, aspnetclient.Options{URL: origin + "/signalr", Hub: "Signalrbench"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, count := range []string{"0", "1025", `"7"`, "1.5"} {
		_, err := c.Invoke(ctx, hub.AspNetBatchTestMethod, json.RawMessage(count), json.RawMessage(`"p"`))
		var ie *aspnetclient.InvocationError
		if !errors.As(err, &ie) || ie.Message != "The count must be a whole number from 1 to 1024." {
			t.Errorf("BatchTest(%s) error = %v, want the count refused", count, err)
		}
	}
}
