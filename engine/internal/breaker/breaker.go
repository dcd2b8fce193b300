package breaker

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// State is where a circuit breaker stands.
type State int

const (
	Closed State = iota
	Open
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MarshalText makes the state read as its name in JSON.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Settings are the thresholds of one breaker. Values below their
// minimum are raised to it: Failures, Successes and HalfOpenTrials to 1,
// Cooldown to 0, MaxCooldown to Cooldown (no growth).
type Settings struct {
	Failures       int // consecutive failures that open a closed breaker
	Successes      int // consecutive trial successes that close a half-open one
	HalfOpenTrials int // trials in flight at once while half-open
	Cooldown       time.Duration
	MaxCooldown    time.Duration // a failed trial doubles the cooldown up to this
}

// Transition is one state change, as reported to the hook.
type Transition struct {
	From, To State
	Reason   string
	Cooldown time.Duration // the cooldown in force, for transitions to open
	// Flap, for a closed breaker opening again, is how soon after it last
	// closed: non-zero when that was soon enough to count as flapping.
	Flap time.Duration
	At   time.Time
}

// Info is a breaker's state for display.
type Info struct {
	State                State
	ConsecutiveFailures  int // closed: failures in a row so far
	ConsecutiveSuccesses int // half-open: trial successes in a row so far
	TrialsInFlight       int
	CurrentCooldown      time.Duration
	OpenedAt             time.Time // zero while closed
	ReopenCount          int       // failed half-open periods since it last closed
	Flaps                int       // opens in a row that each came soon after a close
	NextTrialAt          time.Time // open: when the cooldown ends; zero otherwise
}

// Breaker is a policy-free circuit breaker: the caller asks before each
// attempt (Acquire) and reports how it ended (Success, Failure, Release);
// state changes go to a hook. What counts as a failure is the caller's call.
//
// Results that no longer fit the state are ignored rather than guessed at:
// a non-trial result reported while open or half-open belongs to an attempt
// sent before the breaker opened, and a trial result with no trial
// outstanding belongs to a half-open period that has already ended. A
// trial result is matched to any outstanding trial, not to the one it was
// granted as: trials are interchangeable, and this keeps the slot count
// exact (never negative, never leaking) without tokens.
//
// The hook runs outside the breaker's lock, one call at a time and in
// transition order, so it may take other locks and may call the breaker.
// A transition is normally delivered before the call that caused it
// returns; if another goroutine is delivering at that moment, that
// goroutine delivers it instead.
type Breaker struct {
	mu   sync.Mutex
	set  Settings
	now  func() time.Time
	hook func(Transition)
	gate func(hard bool, reason string) bool

	state     State
	failures  int
	successes int
	trials    int
	cooldown  time.Duration
	openedAt  time.Time
	reopens   int

	// Flap memory: when it last closed, the cooldown it had served, and how
	// many opens in a row came soon after a close.
	closedAt time.Time
	served   time.Duration
	flaps    int
	// beforeOpen is the flap memory as it was before the open from closed
	// now in force, so that Revert can put it back; stretchAt is when that
	// open came.
	beforeOpen flapMemory
	stretchAt  time.Time
	// reopened: the failed trials since it opened from closed, newest
	// last (at most maxReopensKept), each with the cooldown it doubled.
	reopened []reopen
	// forgiven: the open in force was taken back (ForgiveSince): the close
	// that ends it leaves the flap memory as it was before that open.
	forgiven bool

	pending    []Transition
	delivering bool
}

// New returns a closed breaker. now nil means time.Now; onTransition
// may be nil.
func New(s Settings, now func() time.Time, onTransition func(Transition)) *Breaker {
	s.Failures = max(s.Failures, 1)
	s.Successes = max(s.Successes, 1)
	s.HalfOpenTrials = max(s.HalfOpenTrials, 1)
	s.Cooldown = max(s.Cooldown, 0)
	s.MaxCooldown = max(s.MaxCooldown, s.Cooldown)
	if now == nil {
		now = time.Now
	}
	return &Breaker{set: s, now: now, hook: onTransition, cooldown: s.Cooldown}
}

// SetOpenGate installs a gate asked before a closed breaker opens; when it
// says no, the breaker stays closed (its run of failures kept, so the next
// failure asks again). hard says the evidence is conclusive (HardFailure).
// The gate runs under the breaker's lock: it must not call this breaker,
// nor wait on another's. Set it before the breaker is used.
func (b *Breaker) SetOpenGate(gate func(hard bool, reason string) bool) { b.gate = gate }

// Acquire asks to send one attempt. Closed: granted, not a trial. Open: once
// the cooldown has run out the breaker turns half-open. Half-open: granted as
// a trial while fewer than HalfOpenTrials are in flight. A granted trial must
// end in exactly one of Success(true), Failure(true, …) or Release(true).
func (b *Breaker) Acquire() (ok, trial bool) {
	b.mu.Lock()
	if b.state == Closed {
		b.mu.Unlock()
		return true, false
	}
	deliver := false
	if b.state == Open {
		now := b.now()
		if now.Before(b.openedAt.Add(b.cooldown)) {
			b.mu.Unlock()
			return false, false
		}
		deliver = b.moveLocked(HalfOpen, "cooldown elapsed", now)
	}
	if b.trials < b.set.HalfOpenTrials {
		b.trials++
		ok, trial = true, true
	}
	b.mu.Unlock()
	if deliver {
		b.deliver()
	}
	return ok, trial
}

// Routable says whether Acquire would grant an attempt now, and whether it
// would be a trial, without changing anything.
func (b *Breaker) Routable() (ok, trial bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case Closed:
		return true, false
	case Open:
		if b.now().Before(b.openedAt.Add(b.cooldown)) {
			return false, false
		}
		return true, true
	default:
		return b.trials < b.set.HalfOpenTrials, true
	}
}

// Success reports an attempt that worked.
func (b *Breaker) Success(trial bool) {
	b.mu.Lock()
	deliver := false
	switch {
	case !trial && b.state == Closed:
		b.failures = 0
	case trial && b.takeTrialLocked():
		b.successes++
		if b.successes >= b.set.Successes {
			deliver = b.moveLocked(Closed, fmt.Sprintf("%d trial successes in a row", b.successes), b.now())
		}
	}
	b.mu.Unlock()
	if deliver {
		b.deliver()
	}
}

// Failure reports an attempt that failed; reason explains it in the
// transition it may cause.
func (b *Breaker) Failure(trial bool, reason string) { b.failure(trial, false, reason) }

// HardFailure reports a failure that is conclusive evidence (the endpoint
// refused the connection): the open gate is told so.
func (b *Breaker) HardFailure(trial bool, reason string) { b.failure(trial, true, reason) }

func (b *Breaker) failure(trial, hard bool, reason string) {
	b.mu.Lock()
	deliver := false
	switch {
	case !trial && b.state == Closed:
		b.failures++
		if b.failures >= b.set.Failures {
			why := fmt.Sprintf("%d failures in a row, last: %s", b.failures, reason)
			if b.gate == nil || b.gate(hard, why) {
				deliver = b.moveLocked(Open, why, b.now())
			}
		}
	case trial && b.takeTrialLocked():
		deliver = b.moveLocked(Open, "trial failed: "+reason, b.now())
	}
	b.mu.Unlock()
	if deliver {
		b.deliver()
	}
}

// Release ends an attempt that got no verdict (cancelled because another
// attempt won): it frees a trial slot and counts nothing.
func (b *Breaker) Release(trial bool) {
	if !trial {
		return
	}
	b.mu.Lock()
	b.takeTrialLocked()
	b.mu.Unlock()
}

// Trip opens the breaker whatever the attempts say, for health signals
// found outside them (an endpoint that answers but lags the chain head).
// Closed: opens with the base cooldown, if the open gate agrees. Half-open: re-opens as a failed
// trial does. Open: restarts the cooldown, with no transition.
func (b *Breaker) Trip(reason string) {
	b.mu.Lock()
	deliver := false
	now := b.now()
	switch {
	case b.state == Open:
		b.openedAt = now
	case b.state == Closed && b.gate != nil && !b.gate(false, reason):
	default:
		deliver = b.moveLocked(Open, reason, now)
	}
	b.mu.Unlock()
	if deliver {
		b.deliver()
	}
}

// Revert takes back failures found, after the fact, not to have been the
// endpoint's (a slowdown of the whole pool, noticed a moment later on the
// endpoints with longer deadlines): closed, it forgets its run of failures;
// open since at or after since, from closed (not a failed trial), it closes
// again with reason. Anything else is left as it is.
func (b *Breaker) Revert(since time.Time, reason string) {
	b.mu.Lock()
	deliver := false
	switch {
	case b.state == Closed:
		b.failures = 0
	case b.state == Open && b.reopens == 0 && !b.openedAt.Before(since):
		deliver = b.moveLocked(Closed, reason, b.now())
		b.closedAt, b.served, b.flaps = b.beforeOpen.closedAt, b.beforeOpen.served, b.beforeOpen.flaps
	}
	b.mu.Unlock()
	if deliver {
		b.deliver()
	}
}

// ForgiveSince takes back what the breaker made of failures since since
// that were not the endpoint's (an injected fault, ended now), when it
// opened from closed since then: its flap memory is as it was before that
// open (neither it nor a close since counts toward flapping) and, still
// open or half-open, its cooldown is the base one again (its next trial a
// base cooldown after it last opened). A fault drilled a few times in a
// row doubled the cooldown at each, 10 s to 5 m, and kept a healthy
// endpoint out that long after its fault was cleared. A breaker open since
// before the fault keeps what it had then: the trials it failed in the
// fault were the fault's, and their doublings are taken back. It says
// whether the cooldown changed.
func (b *Breaker) ForgiveSince(since time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == Closed {
		b.failures = 0 // the run of failures the fault made
	}
	if b.stretchAt.IsZero() || b.stretchAt.Before(since) {
		i := slices.IndexFunc(b.reopened, func(r reopen) bool { return !r.at.Before(since) })
		if b.state == Closed || i < 0 {
			return false
		}
		changed := b.cooldown != b.reopened[i].from
		b.cooldown, b.reopens = b.reopened[i].from, b.reopens-(len(b.reopened)-i)
		b.reopened = b.reopened[:i]
		return changed
	}
	b.closedAt, b.served, b.flaps = b.beforeOpen.closedAt, b.beforeOpen.served, b.beforeOpen.flaps
	if b.state == Closed {
		return false
	}
	changed := b.cooldown != b.set.Cooldown
	b.cooldown, b.reopens = b.set.Cooldown, 0
	b.reopened = b.reopened[:0]
	b.forgiven = true
	return changed
}

// State is the current state. An open breaker whose cooldown has run out
// stays open until the next Acquire.
func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// Info returns the breaker's state and counters.
func (b *Breaker) Info() Info {
	b.mu.Lock()
	defer b.mu.Unlock()
	in := Info{
		State:           b.state,
		TrialsInFlight:  b.trials,
		CurrentCooldown: b.cooldown,
		ReopenCount:     b.reopens,
		Flaps:           b.flaps,
	}
	switch b.state {
	case Closed:
		in.ConsecutiveFailures = b.failures
	case Open:
		in.OpenedAt = b.openedAt
		in.NextTrialAt = b.openedAt.Add(b.cooldown)
	case HalfOpen:
		in.OpenedAt = b.openedAt
		in.ConsecutiveSuccesses = b.successes
	}
	return in
}

// takeTrialLocked frees the slot of a trial whose result has come in; false
// means no trial is outstanding and the result is stale.
func (b *Breaker) takeTrialLocked() bool {
	if b.state != HalfOpen || b.trials == 0 {
		return false
	}
	b.trials--
	return true
}

// moveLocked changes state and queues the transition; true means the caller
// must run deliver after unlocking.
func (b *Breaker) moveLocked(to State, reason string, now time.Time) bool {
	t := Transition{From: b.state, To: to, Reason: reason, At: now}
	switch to {
	case Open:
		if b.state == Closed {
			b.beforeOpen = flapMemory{b.closedAt, b.served, b.flaps}
			b.stretchAt = now
			b.forgiven = false
		}
		switch {
		case b.state == HalfOpen:
			if len(b.reopened) == maxReopensKept {
				b.reopened = slices.Delete(b.reopened, 0, 1)
			}
			b.reopened = append(b.reopened, reopen{at: now, from: b.cooldown})
			b.cooldown = min(2*b.cooldown, b.set.MaxCooldown)
			b.reopens++
		case b.state == Closed && b.flapping(now):
			b.cooldown = min(2*b.served, b.set.MaxCooldown)
			b.flaps++
			t.Flap = now.Sub(b.closedAt)
		case b.state == Closed:
			b.flaps = 0
		}
		b.openedAt = now
		t.Cooldown = b.cooldown
	case Closed:
		if !b.forgiven {
			b.served, b.closedAt = b.cooldown, now
		}
		b.forgiven = false
		b.cooldown = b.set.Cooldown
		b.reopens = 0
		b.reopened = b.reopened[:0]
		b.openedAt = time.Time{}
	}
	b.state = to
	b.failures, b.successes, b.trials = 0, 0, 0
	if b.hook == nil {
		return false
	}
	b.pending = append(b.pending, t)
	if b.delivering {
		return false
	}
	b.delivering = true
	return true
}

// flapping says whether a closed breaker opening now does so soon after it
// last closed: within FlapSpan times the cooldown it had served. Such an
// endpoint passes its trials (often a probe's light call) but fails the
// traffic it gets back, so each cycle costs clients a run of failed
// attempts: it opens with double that cooldown instead of the base one, as
// Envoy multiplies an ejection, and the memory fades with the span.
func (b *Breaker) flapping(now time.Time) bool {
	return !b.closedAt.IsZero() && now.Sub(b.closedAt) < FlapSpan*b.served
}

// reopen is a failed trial: when, and the cooldown it doubled.
type reopen struct {
	at   time.Time
	from time.Duration
}

// maxReopensKept bounds the failed trials a breaker remembers: an endpoint
// down for days fails one every breaker.max_cooldown.
const maxReopensKept = 16

type flapMemory struct {
	closedAt time.Time
	served   time.Duration
	flaps    int
}

// FlapSpan is how many of its last cooldowns a breaker must stay closed
// for its next open not to count as flapping.
const FlapSpan = 4

// deliver hands queued transitions to the hook until none are left. Only
// one goroutine delivers at a time (the one that found no one delivering),
// which keeps the hook serial and in order without holding b.mu during it.
func (b *Breaker) deliver() {
	done := false
	defer func() {
		if !done { // the hook panicked: let the next transition deliver
			b.mu.Lock()
			b.delivering = false
			b.mu.Unlock()
		}
	}()
	for {
		b.mu.Lock()
		batch := b.pending
		b.pending = nil
		if len(batch) == 0 {
			b.delivering = false
			b.mu.Unlock()
			done = true
			return
		}
		b.mu.Unlock()
		for _, t := range batch {
			b.hook(t)
		}
	}
}
