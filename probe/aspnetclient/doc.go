// Package aspnetclient is hubprobe's classic ASP.NET SignalR (2.x) client,
// speaking what Microsoft.AspNet.SignalR 2.4 and its JavaScript client
// 2.4.3 speak: negotiate (following the redirect of Azure SignalR Service
// in ASP.NET mode to its /aspnetclient endpoint), connect and start,
// reconnect, abort and ping; the connection and groups tokens and the
// message cursor; the persistent-connection envelope and its keep-alive;
// hub invocations with their results, and the hub's calls to the client;
// over WebSockets, Server-Sent Events, Long Polling and Forever Frame
// (the endless <script> page an iframe loads). What every client of
// hubprobe shares (the settings, the WebSocket dialer, the write turn and
// orderly close, the keep-alive timer that also measures the round trip,
// the connect phases, the failures) is package clientconn's.
package aspnetclient
