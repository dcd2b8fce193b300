package engine

import (
	"sync/atomic"
	"time"
)

// role is why an attempt was sent.
type role uint8

const (
	rolePrimary  role = iota // the first attempt of a request
	roleHedge                // a duplicate sent because the delay passed
	roleFailover             // a retry elsewhere after a failed attempt
)

func (r role) String() string { return [...]string{"primary", "hedge", "failover"}[r] }

// counts is one set of request-path counters. All fields are atomics so the
// hot path never locks; Snapshot copies them into AccountSnapshot.
type counts struct {
	name string // the method, or "other": its metrics label
	// served counts the client requests (per method only) that ended
	// without rpcdash's own error; Requests is served + clientErrors + clientGone, each
	// counted as its request ends, after every attempt it sent: counted as
	// planned, a snapshot taken while requests waited to be sent showed
	// more of them answered than attempts sent (ok 150 > 147 attempts).
	served      atomic.Int64
	attempts    [3]atomic.Int64
	failures    atomic.Int64
	hedgesFired atomic.Int64
	hedgesWon   atomic.Int64
	losers      atomic.Int64 // attempts cancelled because another won
	// outrunUnanswered: the losers that count toward the hang rule
	// (noteUnanswered): outrun without an answer, before their deadline,
	// by an attempt not given more time than they had.
	outrunUnanswered atomic.Int64
	loserNanos       atomic.Int64 // upstream time the losers consumed
	releaseNanos     atomic.Int64 // cancel → release, summed over losers
	extraCost        atomic.Uint64
	clientErrors     atomic.Int64 // requests answered with rpcdash's own error
	clientGone       atomic.Int64 // requests whose client went away before their answer (clientoutcome.go)
	// settledAttempts: the attempts of the requests that ended, counted
	// with them (countUpstream): amplification's numerator. attempts are
	// counted as sent, so requests in flight (a write held 10 s) read as
	// sent more than once.
	settledAttempts atomic.Int64
	// refused counts the requests whose due hedge was not sent, by
	// hedgeRefusal (once per request and reason; hedgeSent unused).
	refused [hedgeRefusals]atomic.Int64
}

// hedgeFired counts n hedges fired that cost units in all.
func (c *counts) hedgeFired(n int64, units float64) {
	c.hedgesFired.Add(n)
	c.addCost(units)
}

// lost counts n attempts another answer won over, each having used elapsed
// of upstream time (the calls of an upstream batch share its time) and let
// go release after it was cancelled.
func (c *counts) lost(n int64, elapsed, release time.Duration) {
	c.losers.Add(n)
	c.loserNanos.Add(n * int64(elapsed))
	c.releaseNanos.Add(n * int64(release))
}

func (c *counts) addCost(units float64) {
	// stored as thousandths to stay atomic
	c.extraCost.Add(uint64(units * 1000))
}

// AccountSnapshot is a copy of one set of counters (since start) with
// derived rates.
type AccountSnapshot struct {
	Requests    int64 // client requests (per method and in totals; 0 for an endpoint)
	Primary     int64 // attempts by role
	Hedge       int64
	Failover    int64
	Failures    int64
	HedgesFired int64
	HedgesWon   int64
	Losers      int64 // attempts cancelled because another won
	// OutrunUnanswered: the losers the hang rule counts (2 × breaker.failures
	// in a row, with no answer between, trip the breaker): outrun without an
	// answer before their deadline, by an attempt not given more time.
	OutrunUnanswered int64
	LoserTime        time.Duration // upstream time the losers used
	MeanRelease      time.Duration // mean cancel → release of a loser
	ExtraCost        float64       // cost units hedges added
	ClientErrors     int64
	ClientGone       int64 // requests whose client went away before their answer: not errors of rpcdash's
	// HedgesRefused counts, by reason (hedgeRefusal's names: "late",
	// "queue", "budget", …), the requests whose hedge fell due and was not
	// sent then; nil when none was. A request counts once per reason, and
	// may also count as hedged: a late hedge looks again.
	HedgesRefused map[string]int64
	FireRate      float64 // hedges fired ÷ requests (÷ primaries for an endpoint)
	WinRate       float64 // hedges won ÷ fired
	Amplification float64 // attempts ÷ requests
}

// addTo adds c's counters into t, reading what is counted when something
// ends (a request, an attempt, a hedge's race) before what is counted when
// it starts (an attempt, a hedge), so that no snapshot shows more ended
// than started: requests answered ≤ primary + failover attempts (rpcdash
// answering one itself aside), failures and losers ≤ attempts, hedges won
// ≤ fired ≤ hedge attempts. Each counter only grows, so the bounds hold
// for a sum of such reads too.
func (c *counts) addTo(t *counts) {
	t.hedgesWon.Add(c.hedgesWon.Load())
	t.losers.Add(c.losers.Load())
	t.outrunUnanswered.Add(c.outrunUnanswered.Load())
	t.loserNanos.Add(c.loserNanos.Load())
	t.releaseNanos.Add(c.releaseNanos.Load())
	t.failures.Add(c.failures.Load())
	t.clientErrors.Add(c.clientErrors.Load())
	t.clientGone.Add(c.clientGone.Load())
	t.served.Add(c.served.Load())
	t.settledAttempts.Add(c.settledAttempts.Load())
	for why := range c.refused {
		t.refused[why].Add(c.refused[why].Load())
	}
	t.hedgesFired.Add(c.hedgesFired.Load())
	t.extraCost.Add(c.extraCost.Load())
	for r := range c.attempts {
		t.attempts[r].Add(c.attempts[r].Load())
	}
}

// snapshot is c's counters read once (addTo), with derived rates.
func (c *counts) snapshot() AccountSnapshot {
	var read counts
	c.addTo(&read)
	return read.view()
}

// view is the AccountSnapshot of counters no one is adding to any more (a
// copy made by addTo).
func (c *counts) view() AccountSnapshot {
	s := AccountSnapshot{
		HedgesWon:        c.hedgesWon.Load(),
		Losers:           c.losers.Load(),
		OutrunUnanswered: c.outrunUnanswered.Load(),
		Failures:         c.failures.Load(),
		ClientErrors:     c.clientErrors.Load(),
		ClientGone:       c.clientGone.Load(),
		Requests:         c.served.Load() + c.clientErrors.Load() + c.clientGone.Load(),
		HedgesFired:      c.hedgesFired.Load(),
		Primary:          c.attempts[rolePrimary].Load(),
		Hedge:            c.attempts[roleHedge].Load(),
		Failover:         c.attempts[roleFailover].Load(),
		ExtraCost:        float64(c.extraCost.Load()) / 1000,
	}
	for why := range c.refused {
		if n := c.refused[why].Load(); n > 0 {
			if s.HedgesRefused == nil {
				s.HedgesRefused = map[string]int64{}
			}
			s.HedgesRefused[hedgeRefusal(why).String()] = n
		}
	}
	s.LoserTime = time.Duration(c.loserNanos.Load())
	if s.Losers > 0 {
		s.MeanRelease = time.Duration(c.releaseNanos.Load()) / time.Duration(s.Losers)
	}
	base := s.Requests
	if base == 0 {
		base = s.Primary
	}
	if base > 0 {
		s.FireRate = float64(s.HedgesFired) / float64(base)
		s.Amplification = float64(s.Primary+s.Hedge+s.Failover) / float64(base)
		if s.Requests > 0 {
			s.Amplification = float64(c.settledAttempts.Load()) / float64(s.Requests)
		}
	}
	if s.HedgesFired > 0 {
		s.WinRate = float64(s.HedgesWon) / float64(s.HedgesFired)
	}
	return s
}

// accounts holds the per-method counters; methods past maxTrackedMethods
// share the "other" counters (their metrics label).
type accounts struct {
	methods *perMethod[*counts]
}

func newAccounts() *accounts {
	return &accounts{methods: newPerMethod(true, func(m string) *counts { return &counts{name: m} })}
}

func (a *accounts) method(m string) *counts {
	c, _ := a.methods.get(m)
	return c
}

// byMethod reads every method's counters once: each method's snapshot,
// and totals their sum, exactly (the "other" slot catches methods past the
// cap), as read at the same moments.
func (a *accounts) byMethod() (map[string]AccountSnapshot, AccountSnapshot) {
	var t counts
	all := a.methods.all()
	per := make(map[string]AccountSnapshot, len(all))
	for m, c := range all {
		var read counts
		c.addTo(&read)
		read.addTo(&t)
		per[m] = read.view()
	}
	return per, t.view()
}
