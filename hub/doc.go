// Package hub is hubprobe's embedded reference hub: a SignalR-compatible
// server that implements the benchmark hub contract, so the probe (and any
// SignalR client) can run the standard benchmark scenarios against it without
// an ASP.NET app server.
//
// The hub serves negotiate at Path+"/negotiate" and the WebSockets transport
// at Path with the JSON hub protocol. Hub methods (matched case-insensitively):
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
//
// Every new connection first receives OnConnected(id). Payloads are passed
// through as the bytes the client sent; the hub only peeks at the one field it
// routes on, and encodes each fanned-out message once for all receivers.
//
// Limits follow ASP.NET Core's defaults (Options): a 15 s handshake timeout,
// a Ping after 15 s of silence, a Close after 30 s without hearing from the
// client, 32 KiB per message. Each connection has a bounded send queue; a
// client that lets it fill is sent a Close with an error and dropped, so a
// slow consumer cannot grow the hub's memory. Replies to the caller itself are
// written by its read loop, batched while more input is already buffered.
//
// Slow mode (Options.DeliveryDelay, SetDeliveryDelay) holds every
// RecordLatency and streamed echo back for a while, to show what a slow hub
// looks like on the dashboards.
//
// Transports and hub protocols sit behind small internal seams (transport and
// codec) so Server-Sent Events, Long Polling and MessagePack can be added
// without touching the hub methods.
package hub
