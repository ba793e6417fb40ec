package clientconn

import "time"

// OrDefault is v, or def when v is zero or negative: how both clients fill
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

func (NopObserver) HTTPResponse(string, int) {}
func (NopObserver) BytesSent(int)            {}
func (NopObserver) BytesReceived(int)        {}
func (NopObserver) Connected(ConnectTiming)  {}
func (NopObserver) RoundTrip(time.Duration)  {}
