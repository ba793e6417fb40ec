package oidc

import "time"

// SetClock makes v read the time from now, so tests can step past
// MinRefetchInterval.
func SetClock(v *Verifier, now func() time.Time) { v.now = now }
