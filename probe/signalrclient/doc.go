// Package signalrclient is hubprobe's ASP.NET Core SignalR client: negotiate
// (following an Azure SignalR Service redirect), the WebSockets, Server-Sent
// Events and Long Polling transports, the hub protocol's handshake, and a
// connection that invokes hub methods and hands every message it receives to
// the caller's handlers. The wire format is package signalr's; what every
// client of hubprobe shares (keep-alive, half-open check, write turn,
// failures, connect phases) is package clientconn's.
package signalrclient
