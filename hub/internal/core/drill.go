package core

import "time"

// Drill is how the hub ends a connection on purpose, so that a canary's
// drops can be shown for each reason: in a test, in hubprobe's own
// default, or in a team's drill.
type Drill string

// The drills. Each protocol ends a connection in its own words:
//
//   - DrillCloseError: a close with an error (SignalR's Close with an
//     error, a Web PubSub close frame 1011 with a reason, a classic
//     error envelope E);
//   - DrillCloseReconnect: a close that lets the client come back
//     (SignalR's Close with allowReconnect, a Web PubSub close frame
//     1012, service restart, classic SignalR's reconnect flag T, which
//     its client mends with a reconnect);
//   - DrillDisconnect: the server's plain goodbye (SignalR's Close without
//     an error, Web PubSub's disconnected message, classic SignalR's
//     disconnect flag D);
//   - DrillAbort: the socket cut without a word, as a crashed server or a
//     load balancer would;
//   - DrillRestart: every connection cut at once, and for RestartTime new
//     ones refused with HTTP 503, as while a server restarts (hub.Hub
//     does this one; the protocols abort).
const (
	DrillCloseError     Drill = "close_error"
	DrillCloseReconnect Drill = "close_reconnect"
	DrillDisconnect     Drill = "disconnect"
	DrillAbort          Drill = "abort"
	DrillRestart        Drill = "restart"
)

// Drills lists every drill.
var Drills = []Drill{DrillCloseError, DrillCloseReconnect, DrillDisconnect, DrillAbort, DrillRestart}

// RestartTime is how long a restart drill refuses new connections.
const RestartTime = 2 * time.Second

// DrillText is what a drill's close says, where the protocol says
// something.
const DrillText = "hubprobe drill: the hub ended this connection on purpose."
