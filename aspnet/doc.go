// Package aspnet is the wire codec of classic ASP.NET SignalR (the
// Microsoft.AspNet.SignalR 2.x library and its jquery.signalR 2.4 client):
// the negotiate answer and Azure SignalR Service's ASP.NET-mode redirect,
// the persistent-connection envelope (cursor C, messages M, init S,
// reconnect T, groups token G, long-poll delay L, disconnect D, error E,
// and the keep-alive {}), hub invocations and their results, the start and
// ping answers, the query parameters and paths, and the framing of the four
// transports (WebSockets, Server-Sent Events, Long Polling, Forever Frame).
//
// Every shape follows the SignalR 2.4.3 sources (PersistentConnection,
// PersistentResponse, HubResponse, ClientHubInvocation, the transports) and
// the jquery.signalR 2.4.3 client; the redirect follows Azure/azure-signalr's
// ASP.NET NegotiateMiddleware. Encoders write members in the order the .NET
// server's serializer writes them, so frames the server sends come back
// byte for byte through a decode and an encode.
//
// Decoders read with hubprobe's one JSON scanner, without reflection, and
// keep what they return as slices of their input: a decoded frame aliases
// the bytes it came from. Member names are matched exactly, as the
// JavaScript client reads them. Errors wrap ErrProtocol.
//
// It holds no connection and no metrics, so hubprobe's classic client and
// its reference hub share one definition of every frame.
package aspnet
