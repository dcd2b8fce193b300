package engine

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// FaultMode is a failure the engine's transport imposes on an endpoint, on
// client traffic and probes alike, so that failover can be rehearsed
// without touching the provider.
type FaultMode string

const (
	FaultLatency FaultMode = "latency" // add Latency before sending
	FaultError   FaultMode = "error"   // answer HTTP 500 without sending
	Fault429     FaultMode = "http429" // answer HTTP 429 without sending
	FaultTimeout FaultMode = "timeout" // hang until the attempt's deadline
	FaultStale   FaultMode = "stale"   // the endpoint's head stops advancing
)

// FaultSpec is what an operator injects.
type FaultSpec struct {
	Mode FaultMode `json:"mode"`
	// Rate is the share of requests hit, (0,1]; 0 means all.
	Rate float64 `json:"rate,omitempty"`
	// Latency is the delay added in latency mode.
	Latency Duration `json:"latency,omitempty"`
	// Duration bounds the fault; 0 means until cleared.
	Duration Duration `json:"duration,omitempty"`
	// RetryAfter is sent with http429 answers (0 = no header).
	RetryAfter Duration `json:"retry_after,omitempty"`
}

// Validate checks a spec and fills its defaults.
func (f *FaultSpec) Validate() error {
	switch f.Mode {
	case FaultLatency:
		if f.Latency <= 0 {
			f.Latency = Duration(500 * time.Millisecond)
		}
	case FaultError, Fault429, FaultTimeout, FaultStale:
	default:
		return fmt.Errorf("mode: must be one of latency, error, http429, timeout, stale; got %q", f.Mode)
	}
	if f.Rate < 0 || f.Rate > 1 {
		return fmt.Errorf("rate: must be in [0, 1], got %v", f.Rate)
	}
	if f.Rate == 0 {
		f.Rate = 1
	}
	if f.Duration < 0 {
		return fmt.Errorf("duration: must not be negative")
	}
	if f.Mode == FaultStale && f.Rate != 1 {
		return fmt.Errorf("rate: stale applies to the whole endpoint and takes no rate")
	}
	return nil
}

// activeFault is an injected fault as the transport sees it. It is
// immutable once stored; replacing or clearing swaps the pointer.
type activeFault struct {
	FaultSpec
	Since   time.Time
	Expires time.Time // zero = never
}

func (f *activeFault) expired(now time.Time) bool {
	return !f.Expires.IsZero() && !now.Before(f.Expires)
}

// hits decides whether this request is affected.
func (f *activeFault) hits() bool {
	return f.Rate >= 1 || rand.Float64() < f.Rate
}

func (f *activeFault) info() *FaultInfo {
	return &FaultInfo{Mode: f.Mode, Rate: f.Rate, Latency: f.Latency.D(), Duration: f.Duration.D(),
		RetryAfter: f.RetryAfter.D(), Since: f.Since, Expires: f.Expires}
}
