package probe

import "encoding/json"

// Observer receives what a connection sees on the wire, so callers can count
// HTTP responses and bandwidth without probe knowing about their metrics.
// Implementations must be safe for concurrent use and must not block: they
// are called from the read goroutine and from every writer.
type Observer interface {
	// HTTPResponse reports the status code of one HTTP response:
	// "negotiate", or for server-sent events and long polling EndpointSSE,
	// EndpointPoll, EndpointSend and EndpointDelete.
	HTTPResponse(endpoint string, code int)
	// BytesSent reports the payload size of one transport frame written:
	// a WebSocket message, or the body of a POST the server accepted.
	BytesSent(n int)
	// BytesReceived reports the payload size of one transport frame read:
	// a WebSocket message, the data of one server-sent event, or the body
	// of one poll (0 for an empty one).
	BytesReceived(n int)
}

// Handler receives the arguments of a server-to-client invocation; they
// are its to keep. It runs on the connection's read goroutine, so it must
// return quickly and must not block: nothing else is read from the hub
// while it runs, and calling Invoke or Close from it would deadlock.
type Handler func(args []json.RawMessage)
