package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// readmitSlack is what readmission allows beyond the trials' own pace: a
// trial's answer, a status read (a variable so that tests can shorten it).
var readmitSlack = 5 * time.Second

// readmitReopens is how many times the breaker may reopen after the fault
// is cleared before the drill gives up on readmission: once, for a trial
// that was in flight while the fault was on; the next failed trial is the
// endpoint's own.
const readmitReopens = 1

// trialsTake is what the drill allows the trials once the breaker lets the
// first through: breaker.successes of them (probes.recover probes for a
// lagging endpoint) at the probes' interval, or without probe trials at a
// client read a second, plus the slack; at least the step timeout.
func (d *drill) trialsTake() time.Duration {
	per := d.settings.ProbeInterval
	if !d.settings.ProbeTrials || per <= 0 {
		per = time.Second
	}
	n := max(d.settings.BreakerSuccesses, d.settings.ProbeRecover)
	return max(d.cfg.StepTimeout, time.Duration(n+3)*per+readmitSlack)
}

// readmitWait is what readmission waits for, as the instance says it: the
// breaker's next trial, then the trials.
type readmitWait struct {
	trialAt time.Time // the breaker's next trial (its cooldown's end), on the drill's clock; zero: no breaker to wait for
	backoff time.Time // a back-off's end, on the drill's clock; zero: none
	lagging bool      // excluded for lag
	until   time.Time // when the drill gives up
	breaker engine.BreakerSnapshot
}

// readmitWaitOf reads the wait from one status taken at now: an open
// breaker's next_trial_at, a half-open one's opened_at + cooldown (its
// trials are running), a back-off's end, each followed by trialsTake;
// never sooner than cleared + trialsTake, nor than prev.until. The
// instance's instants are carried onto the drill's clock by the status's
// own time, so that the two clocks need not agree.
func (d *drill) readmitWaitOf(cleared, now time.Time, st engine.Snapshot, ep engine.EndpointSnapshot, prev readmitWait) readmitWait {
	local := func(t time.Time) time.Time {
		if st.Time.IsZero() {
			return t
		}
		return now.Add(t.Sub(st.Time))
	}
	w := readmitWait{until: cleared.Add(d.trialsTake()), breaker: ep.Breaker, lagging: ep.LagExcluded}
	switch b := ep.Breaker; {
	case b.State == engine.BreakerOpen && !b.NextTrialAt.IsZero():
		w.trialAt = local(b.NextTrialAt)
	case b.State == engine.BreakerHalfOpen && !b.OpenedAt.IsZero():
		w.trialAt = local(b.OpenedAt.Add(b.Cooldown))
	}
	if !w.trialAt.IsZero() {
		w.until = later(w.until, w.trialAt.Add(d.trialsTake()))
	}
	if !ep.BackoffUntil.IsZero() {
		w.backoff = local(ep.BackoffUntil)
		w.until = later(w.until, w.backoff.Add(d.trialsTake()))
	}
	w.until = later(w.until, prev.until)
	return w
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// cooldownWords says the breaker's cooldown, and why it is longer than
// breaker.cooldown when it is: "cooldown 1m20s, up from breaker.cooldown
// 10s as it flapped".
func cooldownWords(b engine.BreakerSnapshot, base time.Duration) string {
	if b.Cooldown <= base || base <= 0 {
		return "cooldown " + b.Cooldown.String()
	}
	why := b.WhyLonger()
	s := fmt.Sprintf("cooldown %s, up from breaker.cooldown %s", b.Cooldown, base)
	if len(why) > 0 {
		s += " as " + strings.Join(why, " and ")
	}
	return s
}

// trialsWords says what the trials are.
func (d *drill) trialsWords() string {
	n := d.settings.BreakerSuccesses
	what := fmt.Sprintf("%d trial successes in a row", n)
	if n == 1 {
		what = "1 trial success"
	}
	if d.settings.ProbeTrials {
		return fmt.Sprintf("%s (probes every %s)", what, d.settings.ProbeInterval)
	}
	return what + " (client reads)"
}

// plan says what the wait is, for the step while it runs and for its
// failure; its instants are the drill's clock's, and how long after the
// clear they come (words that do not go stale on a screen).
func (d *drill) plan(w readmitWait, cleared time.Time) string {
	clock := func(t time.Time) string {
		return fmt.Sprintf("%s (%s after the clear)", t.Format("15:04:05"), max(t.Sub(cleared), 0).Round(100*time.Millisecond))
	}
	var parts []string
	switch w.breaker.State {
	case engine.BreakerOpen:
		parts = append(parts, fmt.Sprintf("%s's breaker is open, %s: next trial at %s, then %s", d.endpoint,
			cooldownWords(w.breaker, d.settings.BreakerCooldown), clock(w.trialAt), d.trialsWords()))
	case engine.BreakerHalfOpen:
		parts = append(parts, fmt.Sprintf("%s's breaker is half-open (%s): it needs %s", d.endpoint,
			cooldownWords(w.breaker, d.settings.BreakerCooldown), d.trialsWords()))
	}
	if !w.backoff.IsZero() {
		parts = append(parts, fmt.Sprintf("%s backs off after HTTP 429 until %s", d.endpoint, clock(w.backoff)))
	}
	if w.lagging {
		parts = append(parts, fmt.Sprintf("%s lags: %d probes in a row within chain.max_head_lag readmit it (probes every %s)",
			d.endpoint, d.settings.ProbeRecover, d.settings.ProbeInterval))
	}
	if len(parts) == 0 {
		parts = append(parts, d.endpoint+" is not routable yet")
	}
	return strings.Join(parts, "; ") + "; gives up at " + w.until.Format("15:04:05")
}

// named says whether the wait names what it waits for: the breaker, a
// back-off or the lag.
func (w readmitWait) named() bool {
	return w.breaker.State != engine.BreakerClosed || !w.backoff.IsZero() || w.lagging
}

func readmittedNow(ep engine.EndpointSnapshot) bool {
	return ep.Routable && ep.Breaker.State == engine.BreakerClosed && !ep.LagExcluded && ep.BackoffUntil.IsZero()
}

// readmitted: back after the cooldown and breaker.successes trials. The
// wait is the breaker's own, re-read on every poll: until its next trial
// (a flap or a failed trial doubles the cooldown, beyond breaker.cooldown),
// then the trials; the step says it while it runs.
func (d *drill) readmitted(ctx context.Context, s *DrillStep) error {
	cleared := d.clearedAt
	if cleared.IsZero() {
		cleared = time.Now()
	}
	var (
		w        readmitWait
		opened   engine.BreakerSnapshot // the breaker as last seen open
		st       engine.Snapshot
		ep       engine.EndpointSnapshot
		said     string
		reopens0 = -1
	)
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	var back time.Time // when it was first seen readmitted
	for {
		var err error
		if st, err = d.status(ctx); err != nil {
			return err
		}
		now := time.Now()
		ep, _ = st.Endpoint(d.endpoint)
		if readmittedNow(ep) {
			back = now
			break
		}
		if ep.Breaker.State == engine.BreakerOpen {
			opened = ep.Breaker
		}
		if reopens0 < 0 {
			reopens0 = ep.Breaker.Reopens
		}
		w = d.readmitWaitOf(cleared, now, st, ep, w)
		// Say the wait when it starts and when the breaker changes it, once
		// it names what it waits for: a poll can see the breaker closed
		// before the endpoint is routable again (a drill in CI printed
		// "alpha is not routable yet" for it).
		if key := fmt.Sprint(ep.Breaker.State, ep.Breaker.OpenedAt.UnixNano(), ep.Breaker.Cooldown, w.backoff.Unix(), w.lagging); key != said && w.named() {
			said = key
			d.onStep(DrillStep{Index: s.Index, Name: s.Name, State: StepRunning, Started: s.Started, Summary: "waiting: " + d.plan(w, cleared)})
		}
		if n := ep.Breaker.Reopens - reopens0; n > readmitReopens {
			d.readmitEvidence(ctx, s)
			return fail(s, "%s's breaker trials kept failing after the fault was cleared: it reopened %s since, %s; routable %v, lag-excluded %v, backing off %v",
				d.endpoint, engine.Count(int64(n), "time"), cooldownWords(ep.Breaker, d.settings.BreakerCooldown), ep.Routable, ep.LagExcluded, !ep.BackoffUntil.IsZero())
		}
		if now.After(w.until) {
			d.readmitEvidence(ctx, s)
			return fail(s, "%s was not readmitted within %s of clearing the fault (%s): routable %v, breaker %s (%d trial successes), lag-excluded %v, backing off %v",
				d.endpoint, now.Sub(cleared).Round(time.Millisecond), d.plan(w, cleared), ep.Routable, ep.Breaker.State, ep.Breaker.TrialSuccesses, ep.LagExcluded, !ep.BackoffUntil.IsZero())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	mine := d.readmitEvidence(ctx, s)
	// Timed by the breaker's closing (a head back in sync) when the events
	// show it, as the cut is by its opening: the status that showed it came a poll and a status
	// read later, and the events' read after it (a drill read "readmitted
	// 9.922s after the fault was cleared" beside its own evidence of 9.905s,
	// DELETE at +1.471s and the close at +11.376s).
	at := back
	if ev := readmittedBy(mine); ev != nil && ev.Time.After(cleared) && ev.Time.Before(at) {
		at = ev.Time
	}
	took := at.Sub(cleared).Round(time.Millisecond)
	how := ""
	switch d.cfg.Mode {
	case "latency":
		if d.rankedOut && !slices.ContainsFunc(mine, func(ev engine.Event) bool {
			return ev.Type == engine.EventBreaker && ev.To == engine.BreakerOpen.String() // it opened after the ranking cut it out
		}) {
			how = "its breaker never opened: it was ranked behind the others, and the router sends it reads again"
			break
		}
		fallthrough
	case "error", "timeout", "refused", "unreachable":
		var err error
		if how, err = d.breakerPath(mine, opened); err != nil {
			return fail(s, "%s is back, but not through the breaker's half-open trials: %v", d.endpoint, err)
		}
	case "http429":
		how = "its back-off over"
	case "stale":
		how = "its head back within chain.max_head_lag"
	}
	if d.load != nil {
		bound := d.trialsTake()
		wctx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		// A read it answered before it was back (a last-resort failover
		// to an open breaker, a trial) is no evidence that it serves
		// reads again: only those after it was seen readmitted count.
		for at := back; ; {
			reads := d.load.waitReads(wctx, at, 1)
			if len(reads) == 0 {
				return fail(s, "%s is routable again (%s) but served none of the reads in %s", d.endpoint, how, bound)
			}
			if i := slices.IndexFunc(reads, func(r drillRead) bool { return r.endpoint == d.endpoint }); i >= 0 {
				s.Evidence = append(s.Evidence, fmt.Sprintf("a read answered by %s at +%s", d.endpoint, reads[i].at.Sub(d.injectedAt).Round(time.Millisecond)))
				break
			}
			at = reads[len(reads)-1].at
		}
	}
	s.Summary = fmt.Sprintf("%s readmitted %s after the fault was cleared (%s)", d.endpoint, took, how)
	if d.load != nil {
		s.Summary += ", serving reads again"
	}
	return nil
}

// readmittedBy is the last of evs that let the endpoint back in (its
// breaker closed, its head back in sync), nil when none.
func readmittedBy(evs []engine.Event) *engine.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		switch ev := &evs[i]; {
		case ev.Type == engine.EventBreaker && ev.To == engine.BreakerClosed.String(),
			ev.Type == engine.EventHead && ev.From == "lagging" && ev.To == "in-sync":
			return ev
		}
	}
	return nil
}

// readmitEvidence adds the endpoint's events since the fault to the step's
// evidence, and returns them.
func (d *drill) readmitEvidence(ctx context.Context, s *DrillStep) []engine.Event {
	var mine []engine.Event
	for _, ev := range d.since(ctx, d.injectSeq) {
		if ev.Endpoint == d.endpoint && ev.Type != engine.EventFailover && ev.Type != engine.EventFault {
			mine = append(mine, ev)
			s.Evidence = append(s.Evidence, d.describeEvent(ev))
		}
	}
	return mine
}

// breakerPath checks the breaker's way back in the events: open for at
// least its cooldown (as the drill saw it during that open; else
// breaker.cooldown), then half-open, then closed from half-open.
func (d *drill) breakerPath(evs []engine.Event, opened engine.BreakerSnapshot) (string, error) {
	var open, halfOpen, closed *engine.Event
	for i := range evs {
		ev := &evs[i]
		if ev.Type != engine.EventBreaker {
			continue
		}
		switch ev.To {
		case engine.BreakerOpen.String():
			open, halfOpen, closed = ev, nil, nil
		case engine.BreakerHalfOpen.String():
			halfOpen = ev
		case engine.BreakerClosed.String():
			closed = ev
		}
	}
	if open == nil {
		return "", fmt.Errorf("no transition to open in the events")
	}
	// The cooldown that open served, when the drill saw it open.
	cooldown, words := d.settings.BreakerCooldown, ","
	if opened.State == engine.BreakerOpen && opened.Cooldown > 0 && opened.OpenedAt.Sub(open.Time).Abs() < time.Millisecond {
		cooldown = opened.Cooldown
		if cooldown > d.settings.BreakerCooldown {
			words = ", " + cooldownWords(opened, d.settings.BreakerCooldown) + ","
		}
	}
	switch {
	case halfOpen == nil || closed == nil || closed.From != engine.BreakerHalfOpen.String():
		return "", fmt.Errorf("the events show no half-open period ending closed")
	case halfOpen.Time.Sub(open.Time) < cooldown-50*time.Millisecond:
		return "", fmt.Errorf("half-open %s after opening, before the cooldown %s", halfOpen.Time.Sub(open.Time).Round(time.Millisecond), cooldown)
	}
	return fmt.Sprintf("open %s%s then half-open for %s until %d trial successes closed it",
		halfOpen.Time.Sub(open.Time).Round(time.Millisecond), words, closed.Time.Sub(halfOpen.Time).Round(time.Millisecond), d.settings.BreakerSuccesses), nil
}
