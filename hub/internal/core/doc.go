// Package core is what the reference hub's protocols share, knowing none
// of their wire formats. A Host holds the hub's lifecycle (connections
// admitted until Close, which waits for their goroutines), the one lock
// over every protocol's rosters, the hub's clock, slow mode, the
// connection quota that counts every protocol's connections, the
// authorization of access-key and Microsoft Entra ID tokens, the client
// tokens :generateToken issues, and the counters everything counts into.
//
// Beside it, generic over each protocol's connection type: the Roster of a
// hub name (connections by id, groups, users) inside its Space with the
// name's message rate limit; Spaces and a Lifetime per protocol; the
// Tokens negotiate hands out until their transport takes them; the
// DelayQueue of slow mode; and the input buffers connections borrow while
// they read.
//
// Packages signalrhub, wpshub and aspnethub (classic ASP.NET SignalR)
// build on it.
package core
