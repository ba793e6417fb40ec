package signalrclient

import "encoding/json"

// Handler receives the arguments of a server-to-client invocation. They
// alias the connection's read buffer, which is reused once the handler
// returns: a handler copies what it keeps. It runs on the connection's
// read goroutine, so it must return quickly and must not block: nothing
// else is read from the hub while it runs, and calling Invoke or Close
// from it would deadlock.
type Handler func(args []json.RawMessage)
