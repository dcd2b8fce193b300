package engine

import "time"

// lagStaleRounds is how many probe intervals an endpoint's head may go
// unseen before its lag is no longer known.
const lagStaleRounds = 3

// LagUnknown says whether es's lag is no longer known at s.Time: a head was
// seen, but not for lagStaleRounds probe intervals (its probes fail: it is
// down or hung). The engine carries such a head forward at the chain's
// pace, so Lag reads 0, as if it had kept up: an endpoint killed for 4
// minutes showed lag 0 throughout and came back 239 blocks behind. A
// snapshot from an engine that does not say when (HeadSeenAt zero) is
// taken at its word.
func (es EndpointSnapshot) LagUnknown(s Snapshot) bool {
	if es.Head <= 0 || es.HeadSeenAt.IsZero() || s.Settings.ProbeInterval <= 0 {
		return false
	}
	return s.Time.Sub(es.HeadSeenAt) > lagStaleRounds*s.Settings.ProbeInterval
}

// unixTime is t (unix nanos) as a time, zero for 0.
func unixTime(t int64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.Unix(0, t)
}
