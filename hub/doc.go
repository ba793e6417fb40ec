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
// endpoint as an app server in the service's default mode does. For
// classic ASP.NET SignalR the hub emulates the service's ASP.NET mode:
// clients at /aspnetclient with a client token (aud
// {scheme}://{host}/aspnetclient), to which RedirectNegotiate also sends
// the classic /signalr/negotiate.
//
// With Options.AccessKey the hub also serves Azure Web PubSub's data plane.
// Clients connect at /client/hubs/{hub}?access_token= (or with a bearer
// header) with json.webpubsub.azure.v1, json.reliable.webpubsub.azure.v1 or
// no subprotocol (a simple WebSocket client); the token is checked like the
// service does (HS256 with the key, aud {scheme}://{host}/client/hubs/{hub}),
// sub is the user id, role grants webpubsub.joinLeaveGroup and
// webpubsub.sendToGroup (or their .{group} forms; without a role a client
// may only send events) and webpubsub.group joins groups on connect. The
// hub answers connected, joinGroup, leaveGroup, sendToGroup (noEcho), event
// and ping; acks carry Forbidden, Duplicate (a repeated ackId among the
// last 256), BadRequest or InvocationFailed; a failed request without an
// ackId ends the connection. On the reliable subprotocol messages carry
// sequenceIds and sequenceAck frees them; 1000 unacknowledged messages (or
// 16 MB) close the connection. A recovery attempt (awps_connection_id) is
// closed with 1008: dropped connections are not kept, so the official
// client opens a new one. Frames over 1 MiB, invalid frames and service
// frames from a client end the connection with a disconnected message.
// The REST API is under /api/hubs/{hub} with a Web PubSub api-version
// (2021-10-01 … 2024-12-01; SignalR's 2022-06-01 keeps the same paths for
// the SignalR emulation): send to all, a user, a group or a connection
// (202; the Content-Type gives the dataType; filter is refused), group and
// user membership, exists (HEAD), close connections, permissions, and
// /api/health; its tokens' aud is the request URL with or without the
// query. Options.WebPubSubEventHandler (a URL template with {hub} and
// {event}) receives user events as binary-mode CloudEvents signed with
// ce-signature, after an abuse-protection OPTIONS handshake per handler and
// hub origin (an accepted one stands, a refusal for 30 s); a 2xx answer's
// body comes back to the sender as a message from the server, typed by its
// Content-Type. A refused handshake or a missing handler drops the event
// (with an ackId: InvocationFailed); a non-2xx answer without an ackId
// drops the connection. System events (connect, connected, disconnected)
// are not sent. The connection quota counts both services' connections;
// the message rate limit closes a client with "Message count reaches
// limit." and answers a REST send 429.
//
// With Options.EntraIssuer (which turns the emulation on by itself) both
// REST APIs also take Microsoft Entra ID bearer tokens from that OpenID
// issuer (azure/oidc: RS256, keys by kid, iss, exp/nbf, aud
// SignalRResource or WebPubSubResource), and the token's audience says
// which service a request is for. POST /api/hubs/{hub}/:generateToken
// answers {"token"}, a client token of either service (userId,
// minutesToExpire; role and group for Web PubSub), to an Entra or an
// access-key token. Options.DisableLocalAuth refuses every access-key
// token (401, LocalAuthDisabledText): the hub then signs the client tokens
// it issues with a key of its own, as the service does, and sends upstream
// events without ce-signature.
//
// Slow mode (Options.DeliveryDelay, SetDeliveryDelay) holds every
// RecordLatency, streamed echo and pushed batch (and every Web PubSub
// message, but not its acks, and every classic Measure call, but not the
// invocation's result) back for a while, to show what a slow hub looks
// like on the dashboards.
//
// This package is the hub's facade: its options, the server, the
// standalone hub, the hub's metrics and its load; it knows nothing of
// hubprobe's configuration (package daemon runs a hub for each embedded
// target and keeps it in step with the configuration). The work is
// done in internal packages: core (what every protocol shares: lifecycle,
// rosters, quota, authorization, slow mode), transport (the HTTP
// transports), signalrhub (ASP.NET Core SignalR and Azure SignalR
// Service), wpshub (Azure Web PubSub) and aspnethub (classic ASP.NET
// SignalR 2.x at /signalr). A further protocol gets a package beside them
// and a route in Hub.ServeHTTP. Package hubtest serves the hub in tests.
package hub
