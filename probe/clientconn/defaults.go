package clientconn

import "time"

// OrDefault is v, or def when v is zero or negative: how every client fills
// in the durations and sizes an Options left unset.
func OrDefault[T time.Duration | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// NopObserver is the Observer of a connection whose caller gave
// none: it discards what it is told.
type NopObserver struct{}

// HTTPResponse discards what it is told.
func (NopObserver) HTTPResponse(string, int) {}

// BytesSent discards what it is told.
func (NopObserver) BytesSent(int) {}

// BytesReceived discards what it is told.
func (NopObserver) BytesReceived(int) {}

// Connected discards what it is told.
func (NopObserver) Connected(ConnectTiming) {}

// RoundTrip discards what it is told.
func (NopObserver) RoundTrip(time.Duration) {}
