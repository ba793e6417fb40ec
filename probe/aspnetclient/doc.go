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
//
// On the HTTP transports, Send and Invoke start the message's POST and do
// not wait for the POSTs before it, as the JavaScript client's sends do:
// at most MaxSendsInFlight per connection, so a slow answer does not hold
// up the caller's schedule. Such sends may reach the hub out of order, and
// a POST that fails ends the connection. Long polling waits each answer's
// delay (L) before the next poll.
package aspnetclient
