// Package aspnethub is the reference hub's classic ASP.NET SignalR (2.x)
// side: the PersistentConnection endpoints at /signalr (negotiate,
// connect, reconnect, poll, send, start, abort, ping) on WebSockets,
// Server-Sent Events, Long Polling and Forever Frame, with the benchmark's
// Signalrbench hub (Echo, SendToConnection, Broadcast, JoinGroup,
// LeaveGroup, GroupBroadcast, each answered with the client method
// Measure, as Azure/azure-signalr-bench's AspNetAppServer does).
//
// Frames are package aspnet's. Connections live in package core's rosters
// beside the other protocols', so the hub's connection count, quota,
// message counters, rate limit and load cover them.
//
// Tokens. The real server protects the connection token (connection id
// and user name) and the groups token (connection id and group list) with
// ASP.NET's data protection. This hub signs them instead with HMAC-SHA256
// under a key drawn at start, one purpose per kind of token; a token whose
// signature does not verify is refused (400). The real server refuses a
// bad connection token the same way, but quietly rejoins no groups for a
// bad groups token: refusing it makes tampering visible to a probe.
//
// Messages. Each connection numbers the hub-to-client messages it is sent;
// the envelope's cursor C is the number of the next one. A poll or a
// reconnect names the cursor it has (messageId) and gets every message
// from there on that the connection still holds (the last
// replayLimit). A connection with no transport for DisconnectTimeout is
// gone, as is one that calls /abort.
//
// Azure SignalR Service in ASP.NET mode (azure.go). With the host's Azure
// emulation the same endpoints are also served at /aspnetclient, each
// request checked against a client token (a bearer header, or access_token
// in the query): none or a bad one is 401. Config.RedirectNegotiate makes
// the app path's negotiate answer as the service's NegotiateMiddleware
// does, sending the client there with such a token. Unlike the real app
// server, whose middleware answers nothing but negotiate in that mode, the
// app path keeps serving connections.
package aspnethub
