// Package floor is the bare WebSocket echo pair that hubprobe's load figures
// are held against: a gorilla/websocket server that sends every frame back
// and an open-loop client that times the round trips. There is no SignalR
// framing, no compression and 4 KiB buffers, so what it costs is the least
// any WebSocket echo in Go can cost on the same machine.
package floor

// BufferSize is the read and write buffer of every floor connection, the
// same as hubprobe's probe and reference hub use.
const BufferSize = 4096
