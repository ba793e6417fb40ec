package main

import (
	"context"
	"fmt"
	"time"
)

// procWindow is what one process used over the measured window.
type procWindow struct {
	cpu          float64 // user+sys seconds inside the window
	switches     int64   // voluntary context switches inside the window
	baseRSS      int64   // before any connection was made
	connectedRSS int64   // peak up to the moment all connections were open
	peakRSS      int64   // peak from the first connection to the window's end
}

// watcher samples a client and its server while they run.
//
// The server is held stopped (SIGSTOP) while the client starts, so the
// client's first connections cannot complete: once it has a socket open
// and has sat blocked for holdTime, it has done all its start-up work and
// holds no connection state yet, and its RSS then is its baseline. The
// server's baseline is read before the client starts.
//
// The window starts when the client holds n sockets, i.e. when its last
// connection is open and the open-loop sending begins, and lasts window.
// Both processes are sampled every 100 ms through it, and CPU is read at
// both of its ends.
type watcher struct {
	client, server *child
	n              int
	window         time.Duration
	cli, srv       procWindow
	// otherCPU is CPU time the rest of the machine used during the window:
	// everything busy minus the two measured processes.
	otherCPU float64
	// release lets the held server go on.
	release func()
	// onWindow, when set, is called as the window starts; what it returns
	// is called when the window ends.
	onWindow func(clientPID, serverPID int, d time.Duration) (end func())
}

// holdTime is how long the client is left blocked on its first
// connections before its baseline RSS is read.
const holdTime = 200 * time.Millisecond

func (w *watcher) run(ctx context.Context) error {
	if err := w.readBaseline(ctx); err != nil {
		return err
	}
	if err := w.waitConnected(ctx); err != nil {
		return err
	}
	cpuC0, cpuS0, err := w.cpu()
	if err != nil {
		return err
	}
	swC0, swS0, err := w.switches()
	if err != nil {
		return err
	}
	busy0, err := machineBusySeconds()
	if err != nil {
		return err
	}
	w.cli.connectedRSS, w.srv.connectedRSS = w.cli.peakRSS, w.srv.peakRSS
	if w.onWindow != nil {
		defer w.onWindow(w.client.pid(), w.server.pid(), w.window)()
	}
	if err := w.sampleUntil(ctx, time.Now().Add(w.window), 100*time.Millisecond); err != nil {
		return err
	}
	cpuC1, cpuS1, err := w.cpu()
	if err != nil {
		return err
	}
	swC1, swS1, err := w.switches()
	if err != nil {
		return err
	}
	busy1, err := machineBusySeconds()
	if err != nil {
		return err
	}
	w.cli.cpu, w.srv.cpu = cpuC1-cpuC0, cpuS1-cpuS0
	w.cli.switches, w.srv.switches = swC1-swC0, swS1-swS0
	w.otherCPU = busy1 - busy0 - w.cli.cpu - w.srv.cpu
	return nil
}

// readBaseline waits for the client's first socket, lets it block on the
// held server for holdTime, reads its RSS and releases the server.
func (w *watcher) readBaseline(ctx context.Context) error {
	pid := w.client.pid()
	for {
		socks, err := socketCount(pid)
		if err != nil {
			return w.exited(err)
		}
		if socks > 0 {
			break
		}
		if err := w.pause(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	if err := w.pause(ctx, holdTime); err != nil {
		return err
	}
	rss, err := rssBytes(pid)
	if err != nil {
		return w.exited(err)
	}
	w.cli.baseRSS = rss
	w.release()
	return w.sample() // starts the peaks
}

// waitConnected samples until the client holds n sockets.
func (w *watcher) waitConnected(ctx context.Context) error {
	pid := w.client.pid()
	for {
		if err := w.sample(); err != nil {
			return err
		}
		fds, err := fdCount(pid)
		if err != nil {
			return w.exited(err)
		}
		if fds >= w.n {
			socks, err := socketCount(pid)
			if err != nil {
				return w.exited(err)
			}
			if socks >= w.n {
				return nil
			}
		}
		if err := w.pause(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

func (w *watcher) sampleUntil(ctx context.Context, end time.Time, every time.Duration) error {
	for time.Now().Before(end) {
		if err := w.pause(ctx, min(every, time.Until(end))); err != nil {
			return err
		}
		if err := w.sample(); err != nil {
			return err
		}
	}
	return nil
}

// sample updates both peaks.
func (w *watcher) sample() error {
	c, err := rssBytes(w.client.pid())
	if err != nil {
		return w.exited(err)
	}
	s, err := rssBytes(w.server.pid())
	if err != nil {
		return fmt.Errorf("%s: %w", w.server.name, err)
	}
	w.cli.peakRSS, w.srv.peakRSS = max(w.cli.peakRSS, c), max(w.srv.peakRSS, s)
	return nil
}

func (w *watcher) cpu() (client, server float64, err error) {
	if client, err = cpuSeconds(w.client.pid()); err != nil {
		return 0, 0, w.exited(err)
	}
	if server, err = cpuSeconds(w.server.pid()); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", w.server.name, err)
	}
	return client, server, nil
}

func (w *watcher) switches() (client, server int64, err error) {
	if client, err = voluntarySwitches(w.client.pid()); err != nil {
		return 0, 0, w.exited(err)
	}
	if server, err = voluntarySwitches(w.server.pid()); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", w.server.name, err)
	}
	return client, server, nil
}

func (w *watcher) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.client.done:
		return w.exited(nil)
	case <-t.C:
		return nil
	}
}

// exited explains a failed read: most often the client ended early.
func (w *watcher) exited(err error) error {
	select {
	case <-w.client.done:
		return fmt.Errorf("%s %w: %w", w.client.name, errExitedEarly, w.client.failure())
	default:
		return fmt.Errorf("%s: %w", w.client.name, err)
	}
}
