// Package transport holds the reference hub's HTTP transports, which know
// nothing of hub protocols: WebSockets, Server-Sent Events (one long GET
// response written to, POSTs read from) and Long Polling (polls answered
// with whatever was written since the last one, POSTs read from). Each is a
// Conn: a reader that blocks for the client's next message, writes that one
// writer at a time makes, and a graceful or abrupt close. The POST side of
// the two HTTP transports is their Inbox.
//
// ASP.NET Core SignalR's connection dispatcher (package signalrhub) serves
// its connections on them. Classic ASP.NET SignalR's (package aspnethub)
// writes its own: its long polls answer with one envelope from the
// client's cursor rather than the bytes written since the last poll, and
// its streams carry envelopes it builds per write. The package also holds what every transport message
// shares: the batch buffers that join queued messages into one write, and
// the text answers of a connection dispatcher.
package transport
