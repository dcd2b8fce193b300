package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// FaultMode is a failure the engine's transport imposes on an endpoint, on
// client traffic and probes alike, so that failover can be rehearsed
// without touching the provider.
type FaultMode string

const (
	FaultLatency FaultMode = "latency" // add Latency before sending
	FaultError   FaultMode = "error"   // answer HTTP 500 without sending
	Fault429     FaultMode = "http429" // answer HTTP 429 without sending
	FaultTimeout FaultMode = "timeout" // hang while the fault lasts; what it held goes on when it ends
	FaultStale   FaultMode = "stale"   // the endpoint's head stops advancing
	// FaultRefused fails as a refused connection, without sending: the
	// hard failure (the provider is down) whose evidence no cap on open
	// breakers holds back, and the one case a write may fail over.
	FaultRefused FaultMode = "refused"
	// FaultUnreachable: the connection attempt gets no answer at all (an
	// address that drops the SYN). It waits out the dial timeout, or the
	// attempt's end if that comes first, and fails as a connect timeout.
	// Nothing is sent, so a write may fail over, but silence is soft
	// evidence: a local network problem makes every endpoint look so.
	FaultUnreachable FaultMode = "unreachable"
)

// FaultModes lists every mode, in the order menus and messages show them.
var FaultModes = []FaultMode{FaultLatency, FaultError, Fault429, FaultTimeout, FaultStale, FaultRefused, FaultUnreachable}

func faultModeList() string {
	names := make([]string, len(FaultModes))
	for i, m := range FaultModes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

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

// Bounds of a fault's durations: beyond them a value is a typo, not a
// rehearsal (a fault meant to last longer is left without a duration and
// cleared by hand).
const (
	maxFaultLatency    = time.Hour
	maxFaultDuration   = 7 * 24 * time.Hour
	maxFaultRetryAfter = 24 * time.Hour
	defaultFaultDelay  = 500 * time.Millisecond
)

// Validate checks a spec and fills its defaults. Every error starts with
// the name of the field at fault.
func (f *FaultSpec) Validate() error {
	switch f.Mode {
	case FaultLatency:
		if f.Latency == 0 {
			f.Latency = Duration(defaultFaultDelay)
		}
	case FaultError, Fault429, FaultTimeout, FaultStale, FaultRefused, FaultUnreachable:
		if f.Latency != 0 {
			return fmt.Errorf("latency: applies to mode latency only, not %s", f.Mode)
		}
	default:
		return fmt.Errorf("mode: must be one of %s; got %q", faultModeList(), redact.Sanitize(string(f.Mode), 64))
	}
	if err := inRange("latency", f.Latency.D(), 0, maxFaultLatency); err != nil {
		return err
	}
	if f.Mode == FaultLatency && f.Latency <= 0 {
		return fmt.Errorf("latency: must be positive, got %s", f.Latency.D())
	}
	if !(f.Rate >= 0 && f.Rate <= 1) { // NaN included
		return fmt.Errorf("rate: must be in [0, 1], got %v", f.Rate)
	}
	if f.Rate == 0 {
		f.Rate = 1
	}
	if err := inRange("duration", f.Duration.D(), 0, maxFaultDuration); err != nil {
		return err
	}
	if err := inRange("retry_after", f.RetryAfter.D(), 0, maxFaultRetryAfter); err != nil {
		return err
	}
	if f.RetryAfter != 0 && f.Mode != Fault429 {
		return fmt.Errorf("retry_after: applies to mode http429 only, not %s", f.Mode)
	}
	if f.Mode == FaultStale && f.Rate != 1 {
		return fmt.Errorf("rate: stale applies to the whole endpoint and takes no rate")
	}
	return nil
}

func inRange(field string, d, lo, hi time.Duration) error {
	if d < lo || d > hi {
		return fmt.Errorf("%s: must be between %s and %s, got %s", field, lo, hi, d)
	}
	return nil
}

// activeFault is an injected fault as the transport sees it. It is
// immutable once stored; replacing or clearing swaps the pointer.
type activeFault struct {
	FaultSpec
	Since   time.Time
	Expires time.Time // zero = never
	// from: when the faults this one follows on from began (one replacing
	// a running fault carries its start): the breaker forgives its
	// endpoint's opens since then when the fault ends (faultEnded).
	from time.Time
	// ended is closed once the fault is no longer the endpoint's (cleared,
	// run out or replaced): the requests a timeout fault holds go on then.
	ended   chan struct{}
	endOnce sync.Once
}

// running says whether f (nil: none) is in force at now.
func (f *activeFault) running(now time.Time) bool {
	return f != nil && (f.Expires.IsZero() || now.Before(f.Expires))
}

func newActiveFault(spec FaultSpec, now time.Time) *activeFault {
	f := &activeFault{FaultSpec: spec, Since: now, from: now, ended: make(chan struct{})}
	if spec.Duration > 0 {
		f.Expires = now.Add(spec.Duration.D())
	}
	return f
}

func (f *activeFault) end() { f.endOnce.Do(func() { close(f.ended) }) }

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
