package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/probe/aspnetclient"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
)

// payloadBytes is the size of each item's payload.
const payloadBytes = 256

// nobody is the group the up direction sends to: no connection joins it.
const nobody = "classictransports-nobody"

// batchConn is one connection of the experiment, on either client: push
// asks the hub for the batch in one call, sink makes one invocation the
// hub delivers to nobody. The batch's items count into items; last
// receives the count when the last item arrives.
type batchConn struct {
	push, sink func(ctx context.Context) error
	close      func()
	items      atomic.Int64
	last       chan int64
}

func newBatchConn() *batchConn { return &batchConn{last: make(chan int64, 1)} }

// item counts one of the batch's items; isLast marks the batch's end.
func (b *batchConn) item(isLast bool) {
	n := b.items.Add(1)
	if isLast {
		b.last <- n
	}
}

func dialClassic(ctx context.Context, url, transport string, n int) (*batchConn, error) {
	b := newBatchConn()
	c, err := aspnetclient.Dial(ctx, aspnetclient.Options{URL: url, Hub: "Signalrbench", Transport: transport,
		Handlers: map[string]aspnetclient.Handler{"Measure": func(a []json.RawMessage) {
			b.item(len(a) == 2 && string(a[0]) == hub.AspNetBatchTestLast)
		}}})
	if err != nil {
		return nil, err
	}
	payload, _ := json.Marshal(strings.Repeat("x", payloadBytes))
	count := json.RawMessage(fmt.Sprint(n))
	b.push = func(ctx context.Context) error {
		_, err := c.Invoke(ctx, hub.AspNetBatchTestMethod, count, payload)
		return err
	}
	group, _ := json.Marshal(nobody)
	b.sink = func(ctx context.Context) error {
		_, err := c.Invoke(ctx, "GroupBroadcast", group, json.RawMessage("0"), payload)
		return err
	}
	b.close = func() { _ = c.Close(context.Background()) }
	return b, nil
}

func dialCore(ctx context.Context, url, transport string, n int) (*batchConn, error) {
	b := newBatchConn()
	c, err := signalrclient.Dial(ctx, signalrclient.Options{URL: url, Transport: transport,
		Handlers: map[string]signalrclient.Handler{"RecordLatency": func(a []json.RawMessage) {
			b.item(len(a) == 2 && string(a[1]) == fmt.Sprint(n-1))
		}}})
	if err != nil {
		return nil, err
	}
	blob := strings.Repeat("x", payloadBytes)
	pushed, _ := json.Marshal(map[string]string{"blob": blob})
	sunk, _ := json.Marshal(map[string]string{"information.GroupName": nobody, "blob": blob})
	count := json.RawMessage(fmt.Sprint(n))
	b.push = func(ctx context.Context) error {
		_, err := c.Invoke(ctx, "ServerPush", pushed, count)
		return err
	}
	b.sink = func(ctx context.Context) error {
		_, err := c.Invoke(ctx, "SendToGroup", sunk)
		return err
	}
	b.close = func() { _ = c.Close(context.Background()) }
	return b, nil
}

// measure opens one connection and times repeat batches down, then
// repeat bursts up.
func measure(dial func(context.Context, int) (*batchConn, error), n, repeat int) (down, up []time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := dial(ctx, n)
	if err != nil {
		return nil, nil, err
	}
	defer b.close()
	for range repeat {
		d, err := timeDown(ctx, b, n)
		if err != nil {
			return nil, nil, err
		}
		down = append(down, d)
	}
	for range repeat {
		d, err := timeUp(ctx, b, n)
		if err != nil {
			return nil, nil, err
		}
		up = append(up, d)
	}
	return down, up, nil
}

// timeDown times one batch from the call to its last item, which must
// come after all n.
func timeDown(ctx context.Context, b *batchConn, n int) (time.Duration, error) {
	b.items.Store(0)
	start := time.Now()
	if err := b.push(ctx); err != nil {
		return 0, err
	}
	select {
	case got := <-b.last:
		took := time.Since(start)
		if got != int64(n) {
			return 0, fmt.Errorf("the batch's last item came as item %d of %d", got, n)
		}
		return took, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("%d of %d items arrived, not the last", b.items.Load(), n)
	}
}

// timeUp makes n invocations at once and times them until the hub has
// answered every one.
func timeUp(ctx context.Context, b *batchConn, n int) (time.Duration, error) {
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	start := time.Now()
	for range n {
		wg.Go(func() {
			if err := b.sink(ctx); err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return 0, *err
	}
	return time.Since(start), nil
}
