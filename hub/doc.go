// Package hub is hubprobe's embedded reference hub: a SignalR-compatible
// server that implements the benchmark hub contract, so the probe (and any
// SignalR client) can run the standard benchmark scenarios against it without
// an ASP.NET app server.
//
// The hub serves negotiate at Path+"/negotiate" and the transports at Path:
// WebSockets, Server-Sent Events (text only) and Long Polling, each with the
// JSON or MessagePack hub protocol (MessagePack not on Server-Sent Events),
// with the status codes of ASP.NET Core's connection dispatcher. Hub methods
// (matched case-insensitively):
//
//	Echo(p)           → caller receives RecordLatency(p)
//	Broadcast(p)      → every connection receives RecordLatency(p)
//	SendToClient(p)   → connection p["information.ConnectionId"] receives RecordLatency(p)
//	SendToGroup(p)    → group p["information.GroupName"] receives RecordLatency(p)
//	JoinGroup(g)      → caller joins g, then receives JoinGroup()
//	LeaveGroup(g)     → caller leaves g, then receives LeaveGroup()
//	ConnectionId()    → caller receives ConnectionId(id)
//	GetConnectionId() → returns id as the invocation result
//	StreamingEcho(stream, delayMs) → echoes an upload stream as a server stream
//	ServerPush(p, n)  → caller receives RecordLatency(p, i) for i = 0 … n-1, in order
//
// ServerPush is a server-to-client throughput test: one small request, then
// a batch of n pushes, as server code that loops over a data set calling the
// client would send them. Each push carries the request's payload unchanged
// (so the client's send timestamp measures every message's latency) and its
// index (so the client knows the last one, n-1, and the time to the whole
// batch). The pushes are written from a goroutine of the connection's own,
// waiting for room in its send queue rather than dropping the client; n is
// at most 100000, and a connection runs at most 32 pushes at once.
//
// Every new connection first receives OnConnected(id). Payloads are passed
// through as the JSON text the client sent (MessagePack values are converted
// to JSON text on the way in and back on the way out); the hub only peeks at
// the one field it routes on, and encodes each fanned-out message once per
// hub protocol for all receivers.
//
// Limits follow ASP.NET Core's defaults (Options): a 15 s handshake timeout,
// a Ping after 15 s of silence, a Close after 30 s without hearing from the
// client (on Long Polling: without a poll), 32 KiB per message, a 90 s poll
// timeout. Each connection has a bounded send queue; a client that lets it
// fill is sent a Close with an error and dropped, so a slow consumer cannot
// grow the hub's memory. Replies to the caller itself are written by its
// read loop, batched while more input is already buffered (on Server-Sent
// Events and Long Polling: while the POST's body is still to come).
//
// With Options.AccessKey the hub also emulates Azure SignalR Service: the
// client endpoints /client/negotiate?hub= and /client/?hub=, and the REST
// API (v1 and 2022-06-01), all checking HS256 tokens signed with the key.
// Connections of one hub name share broadcasts, groups and users; the app
// path's connections have the hub name of the path's last segment. Options
// set a connection quota (429 "Connection count reaches limit.") and a
// message rate limit (Close "Message count reaches limit.", REST 429), and
// RedirectNegotiate makes the app path's negotiate redirect to the client
// endpoint as an app server in the service's default mode does.
//
// Slow mode (Options.DeliveryDelay, SetDeliveryDelay) holds every
// RecordLatency, streamed echo and pushed batch back for a while, to show what a slow hub
// looks like on the dashboards.
package hub
