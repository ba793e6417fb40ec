package corewire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/scenarios/wire"
	"github.com/hubprobe/hubprobe/signalr"
)

// conn is one connection speaking the benchmark's BenchHub, whose methods
// take hubprobe's payload dictionary with its route (a group, a target
// connection) inside: the route arguments below are not sent.
type conn struct {
	*signalrclient.Conn
	rx wire.Receiver
}

func (c conn) ID() string { return c.ConnectionID() }

// Dropped is why the connection ended, its protocol errors told apart,
// and when.
func (c conn) Dropped() (string, time.Time) {
	return clientconn.DropReason(c.Err(), func(err error) bool { return errors.Is(err, signalr.ErrProtocol) }), c.EndedAt()
}

func (c conn) Echo(ctx context.Context, p json.RawMessage) error {
	return c.Send(ctx, "Echo", p)
}

func (c conn) Broadcast(ctx context.Context, p json.RawMessage) error {
	return c.Send(ctx, "Broadcast", p)
}

func (c conn) SendToConnection(ctx context.Context, _ string, p json.RawMessage) error {
	return c.Send(ctx, "SendToClient", p)
}

func (c conn) SendToGroup(ctx context.Context, _ string, p json.RawMessage) error {
	return c.Send(ctx, "SendToGroup", p)
}

func (c conn) JoinGroup(ctx context.Context, group string) error {
	_, err := c.Invoke(ctx, "JoinGroup", quoted(group))
	return err
}

// AskID asks the hub, for a connection made without negotiate (or with a
// hub that did not return the id).
func (c conn) AskID(ctx context.Context) (string, error) {
	raw, err := c.Invoke(ctx, "GetConnectionId")
	if err != nil {
		return "", fmt.Errorf("GetConnectionId: %w", err)
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil || id == "" {
		return "", fmt.Errorf("GetConnectionId returned no id")
	}
	return id, nil
}

// ServerPush calls ServerPush(p, count); the hub pushes RecordLatency(p,
// i), i = 0 … count-1, back.
func (c conn) ServerPush(ctx context.Context, p json.RawMessage, count int) error {
	return c.Send(ctx, "ServerPush", p, json.RawMessage(strconv.Itoa(count)))
}

// StreamEcho opens StreamingEcho(upload, delayMs): the hub streams each
// item of the upload back, and every item back is a delivery. The stream
// ends when the connection closes.
func (c conn) StreamEcho(ctx context.Context, delay time.Duration) (func(context.Context, json.RawMessage) error, error) {
	up := c.NewUpload()
	ms := json.RawMessage(strconv.FormatInt(delay.Milliseconds(), 10))
	stream, err := c.Stream(ctx, "StreamingEcho", []json.RawMessage{ms}, up)
	if err != nil {
		return nil, fmt.Errorf("StreamingEcho: %w", err)
	}
	go func() {
		for item := range stream.Items() {
			c.rx.Deliver(item, -1)
		}
	}()
	return up.Send, nil
}

// batchIndex reads the index argument of a batch message; -1 when there
// is none or it is no integer.
func batchIndex(args []json.RawMessage) int {
	if len(args) < 2 {
		return -1
	}
	i, err := strconv.Atoi(string(bytes.TrimSpace(args[1])))
	if err != nil {
		return -1
	}
	return i
}

func quoted(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}
