package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/breaker"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// UseProbeTrials hands half-open trials to active probes: from then on an
// endpoint whose breaker is not closed gets no client traffic at all, and
// its trials are the probes' (see Probe). The probe runner calls it.
func (e *Engine) UseProbeTrials() { e.probeTrials.Store(true) }

// NeedsTrial says whether an endpoint's breaker waits for a trial now (open
// with its cooldown over, or half-open with a free trial slot), so a probe
// loop can probe it sooner than its interval.
func (e *Engine) NeedsTrial(name string) bool {
	ep, ok := e.byName[name]
	if !ok {
		return false
	}
	ok, trial := ep.breaker.Routable()
	return ok && trial
}

// NeedsCheck says whether an endpoint was charged a hang it has said
// nothing since, its breaker still closed, so a probe loop can probe it
// sooner than its interval. The router ranks such an endpoint behind the
// others at once, and at low traffic no client attempt brings the next
// charge: its breaker waited for probes, one per probes.interval, to make
// up breaker.failures (a timeout fault on the shipped config's flaky
// endpoint, ranked behind for its errors: open after 12.7 to 25 s).
// Each probe is a request of its own: a slow endpoint answers one, and
// the checks end; a hung one answers none.
func (e *Engine) NeedsCheck(name string) bool {
	ep, ok := e.byName[name]
	if !ok {
		return false
	}
	return ep.breaker.State() == breaker.Closed && ep.hangAt.Load() > ep.heardAt.Load()
}

// NextTrialAt is when an open breaker's cooldown ends (zero if not open).
func (e *Engine) NextTrialAt(name string) time.Time {
	ep, ok := e.byName[name]
	if !ok {
		return time.Time{}
	}
	if info := ep.breaker.Info(); info.State == breaker.Open {
		return info.NextTrialAt
	}
	return time.Time{}
}

// ErrBackingOff: the endpoint answered 429 and its back-off is running, so
// no probe was sent.
var ErrBackingOff = errors.New("endpoint is backing off after HTTP 429")

// ProbeResult is what one active probe saw.
type ProbeResult struct {
	Body     []byte        // the answer (a copy), nil on failure
	RTT      time.Duration // time to the answer or the failure
	Deadline time.Duration // when no answer counted as a hang (probeDeadlines)
	OK       bool          // a JSON-RPC answer (it may still carry a JSON-RPC error)
	Info     jsonrpc.ResponseInfo
	Err      string // redacted cause when !OK
}

// Probe sends one request to an endpoint through the fault layer (so an
// injected fault is seen by probes too) and feeds RTT and outcome into the
// same endpoint state as client traffic, judged by the same rule as a
// client attempt (probeDeadlines): no answer at its deadline is a hang,
// charged then; an answer after it is a late answer, which ends the run of
// failures as a client attempt's does. ctx only cuts it short (the caller
// closing), which is no verdict. The breaker hears the verdict when it is
// closed, or when the probe can be a half-open trial; during the cooldown a
// probe only observes.
func (e *Engine) Probe(ctx context.Context, endpoint, method string, params json.RawMessage) (ProbeResult, error) {
	ep, err := e.endpoint(endpoint)
	if err != nil {
		return ProbeResult{}, err
	}
	now := e.now()
	if off, until := ep.backedOff(now); off {
		// A provider that said 429 counts probes too: they wait as well.
		return ProbeResult{Err: "backing off after HTTP 429 until " + until.Format(time.RFC3339Nano)}, ErrBackingOff
	}
	if off, until := ep.methodBackedOff(method, now); off {
		return ProbeResult{Err: method + " backing off after HTTP 429 until " + until.Format(time.RFC3339Nano)}, ErrBackingOff
	}
	req := jsonrpc.NewRequest(json.RawMessage("1"), method, params)
	verdict, trial := ep.breaker.Acquire()
	stats := ep.stats(method)
	hang, wait, guessed := e.probeDeadlines(ep, stats, trial)
	a := &attempt{ep: ep, role: rolePrimary, trial: trial, start: e.now(), stats: stats, deadline: hang, guessed: guessed}
	if !verdict {
		a.settled.Store(true) // no breaker verdict to give
	}
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	info := ep.breaker.Info()
	defer ep.probes.add(a, cancel, info.NextTrialAt.Sub(a.start), info.State == breaker.Open)()
	var overdue *time.Timer
	charged := make(chan struct{})
	ended := make(chan struct{})
	if hang < wait {
		pace := e.probeSilencePace(ep, stats, hang)
		overdue = time.AfterFunc(hang, func() {
			defer close(charged)
			e.probeOverdue(a, cancel)
			e.watchProbeSilence(a, pace, ended, cancel)
		})
	}
	ep.startAttempt(a.start)
	rep := e.roundTrip(pctx, ep, req, e.methods.Class(method) == jsonrpc.ClassRead)
	a.ended.Store(true)
	close(ended)
	ep.endAttempts(1)
	if overdue != nil && !overdue.Stop() {
		<-charged // its verdicts are in before the outcome is recorded
	}
	switch {
	case ctx.Err() != nil && rep.out == outTimeout:
		rep.out = outCancelled // the caller went away first: no verdict on the endpoint
	case ctx.Err() == nil && rep.out == outCancelled && a.overdue.Load():
		rep.out, rep.cause = outTimeout, fmt.Sprintf("no answer within %s", hang.Round(time.Millisecond)) // ended by probeOverdue
	}
	res := ProbeResult{RTT: e.now().Sub(a.start), Deadline: hang, OK: rep.out == outAnswer || rep.out.errorAnswer(), Info: rep.info, Err: rep.cause}
	if rep.body != nil {
		res.Body = append([]byte(nil), rep.body.Bytes()...)
	}
	e.recordProbe(a, rep, res.RTT)
	if rep.out == outAnswer && isHeadMethod(method) {
		ep.probePace.add(res.RTT)
	}
	putBuf(rep.body)
	return res, nil
}

// probeDeadlines says when a probe without an answer is a hang (hang) and
// how long it listens for a late answer (wait). A probe is held to no
// stricter deadline than the client attempts it stands for: hang is
// probes.timeout, or the endpoint's learned attempt deadline for the method
// when that is longer (with nothing learned yet, probes.timeout: a hung
// endpoint is cut as fast as before). It listens at least as long as an
// attempt with nothing learned would run (a third of the request timeout),
// so a slow endpoint's answers are heard and its deadline learns them. A
// half-open trial's verdict cannot be taken back by a late answer, and no
// client waits on it: it waits the whole time before it is judged, and an
// answer is judged by the endpoint's pace (trial_deadline.go).
// guessed: nothing learned, hang is probes.timeout.
func (e *Engine) probeDeadlines(ep *endpoint, s *methodStats, trial bool) (hang, wait time.Duration, guessed bool) {
	hang = e.cfg.Probes.Timeout
	d, source := e.attemptDeadline(ep, s)
	guessed = source == deadlineCold
	if !guessed {
		hang = max(hang, d)
	}
	wait = max(hang, e.coldDeadline(e.cfg.Server.RequestTimeout))
	if trial {
		hang = wait
	}
	return hang, wait, guessed
}

// probeOverdue charges a probe that passed its hang deadline unanswered, as
// attemptOverdue does a client attempt's, unless the slowness is the pool's
// or rpcdash's own (excusedHang); it goes on listening. A charge
// that would open the breaker ends the probe instead (stop), and is given
// as any failure's (recordProbe: the rates, then the breaker): a late
// answer could no longer help, and the hang is seen as soon as before.
func (e *Engine) probeOverdue(a *attempt, stop context.CancelFunc) {
	now := e.now()
	a.overdue.Store(true)
	a.stats.overdue.Add(1)
	a.ep.overdueAt.Store(now.UnixNano())
	a.ep.overdue.add(a.start, now)
	a.ep.suspect.Store(true)
	if a.settled.Load() {
		return // no verdict to give
	}
	if e.excusedHang(a, now) {
		return // the pool's slowness or rpcdash's, as for a client attempt
	}
	if e.lastStraw(a.ep, now) {
		stop()
		return
	}
	if a.settle() {
		a.chargeHang(fmt.Sprintf("probe: no answer within %s", a.deadline.Round(time.Millisecond)), now, e.cfg.Breaker.Cooldown)
	}
}

// lastStraw says whether one more failure opens ep's breaker: closed, one
// short of breaker.failures in a row, and not held closed by
// breaker.max_open_share (which would refuse the open).
func (e *Engine) lastStraw(ep *endpoint, now time.Time) bool {
	info := ep.breaker.Info()
	return info.State == breaker.Closed && info.ConsecutiveFailures+1 >= e.cfg.Breaker.Failures && !e.heldClosedByCap(ep, now)
}

// recordProbe feeds a probe outcome into the same endpoint state as client
// attempts (recordAnswer, recordRateLimit, countFailure).
func (e *Engine) recordProbe(a *attempt, rep upstreamReply, rtt time.Duration) {
	ep, ms := a.ep, a.stats
	end := a.start.Add(rtt)
	ep.noteRefused(&rep)
	switch rep.out {
	case outAnswer:
		if a.overdue.Load() {
			ms.lateAnswers.Add(1)
			ep.lateAt.Store(end.UnixNano())
		}
		e.recordAnswer(a, rtt, end)
	case outRateLimit:
		e.recordRateLimit(a, "", rep, end) // not one method's: the whole endpoint
	case outCancelled, outUnsupported:
		if rep.out.responded() {
			ep.heard(end)
		}
		if rep.out == outCancelled { // no verdict (RateStats.Verdicts)
			ep.rates.Count(window.Attempts, window.Cancelled)
			ms.rates.Count(window.Attempts, window.Cancelled)
		} else {
			ep.rates.Count(window.Attempts)
			ms.rates.Count(window.Attempts)
		}
		ep.series.ended(end)
		if a.settle() {
			ep.breaker.Release(a.trial)
		}
	default:
		if rep.out.responded() {
			ep.heard(end)
		}
		ep.noAnswer(rep.out)
		if a.excused.Load() && rep.out == outTimeout {
			// Overdue while the whole pool (or rpcdash) was slow, then given
			// up: not the endpoint's fault either.
			ep.rates.Count(window.Attempts, window.Timeout)
			ms.rates.Count(window.Attempts, window.Timeout)
			if a.settle() {
				ep.breaker.Release(a.trial)
			}
			return
		}
		if !a.settle() {
			if a.charged.Load() { // at its hang deadline (probeOverdue)
				e.countFailed(a, nil, rep.failure())
			} else {
				ep.rates.Count(window.Attempts, window.Failure)
				ms.rates.Count(window.Attempts)
				ep.series.failed(end)
			}
			ep.setLastError("probe: "+rep.cause, e.now())
			return
		}
		rep.cause = "probe: " + rep.cause
		e.countFailure(a, nil, rep)
	}
}

// ObserveProbeHead records a probed head and applies the lag rule: an
// endpoint more than chain.max_head_lag behind the pool's highest head is
// taken out of routing for tip-dependent reads, and comes back after its lag
// stayed within the bound for probes.recover consecutive probes.
func (e *Engine) ObserveProbeHead(name string, head int64) {
	ep, ok := e.byName[name]
	if !ok {
		return
	}
	e.observeHead(ep, head, true)
}

// ObserveProbeNoHead records a head probe answered without a head (a
// JSON-RPC error, a null): the endpoint can no longer be taken to keep up.
// Its last head stops being carried forward at the pace, so its lag grows
// with the pool head's and the lag rule takes it out of tip-dependent reads
// past chain.max_head_lag; the run of in-bound probes towards readmission
// starts again. why (the answer's error) is its last error, once per loss,
// so that the lag it shows has its reason beside it.
func (e *Engine) ObserveProbeNoHead(name, why string) {
	ep, ok := e.byName[name]
	if !ok {
		return
	}
	if ep.headLostAt.Load() <= ep.headAt.Load() { // the first since its last head
		now := e.now()
		ep.headLostAt.Store(now.UnixNano())
		ep.setLastError("probe: no head: "+e.upstreamText(why), now)
	}
	ep.lagGood.Store(0)
	e.evaluateLag(ep, false)
}

// evaluateLag re-checks ep; probe says whether this observation counts
// towards readmission.
func (e *Engine) evaluateLag(ep *endpoint, probe bool) {
	lag := e.lagOf(ep)
	bound := e.cfg.Chain.MaxHeadLag
	if lag > bound {
		ep.lagGood.Store(0)
		if !ep.lagExcluded.Swap(true) {
			f := ep.fault.Load()
			flap := ep.lagFlaps.out(e, e.now(), f != nil && f.Mode == FaultStale, "lagging", "in-sync probes")
			e.events.add(Event{Type: EventHead, Endpoint: ep.Name, From: "in-sync", To: "lagging",
				Message: fmt.Sprintf("%d behind the pool's head %d (chain.max_head_lag %d): out of routing for tip-dependent reads%s", lag, e.heads.top.Load(), bound, flap)})
		}
		return
	}
	if !ep.lagExcluded.Load() || !probe {
		return
	}
	need := ep.lagFlaps.needNow(e.cfg.Probes.Recover)
	if n := ep.lagGood.Add(1); n >= need {
		if ep.lagExcluded.Swap(false) {
			ep.lagGood.Store(0)
			ep.lagFlaps.in(e.now(), need)
			e.events.add(Event{Type: EventHead, Endpoint: ep.Name, From: "lagging", To: "in-sync",
				Message: fmt.Sprintf("lag %d within %d for %d probes: readmitted", lag, bound, n)})
		}
	}
}

// Exclusion kinds set by probes (ExcludeAhead is the engine's own).
const (
	ExcludeWrongChain = "wrong-chain"
	ExcludeUnhealthy  = "unhealthy"
)

// Exclude takes an endpoint out of routing for a reason found outside the
// request path (wrong chain, node reports itself unhealthy) until Include.
// ExcludeAhead is the engine's verdict on the heads it sees: Exclude and
// Include leave it alone.
func (e *Engine) Exclude(name, kind, reason string) {
	ep, ok := e.byName[name]
	if !ok || kind == ExcludeAhead {
		return
	}
	reason = redact.Sanitize(e.scrub.Scrub(reason), redact.MaxShown) // it may quote what the endpoint answered
	ep.mu.Lock()
	_, had := ep.exclusions[kind]
	if ep.exclusions == nil {
		ep.exclusions = map[string]string{}
	}
	ep.exclusions[kind] = reason
	if kind == ExcludeUnhealthy {
		ep.healthyGood = 0
	}
	ep.mu.Unlock()
	if kind == ExcludeWrongChain {
		e.forgetHead(ep)
	}
	if !had {
		flap := ""
		if kind == ExcludeUnhealthy {
			flap = ep.healthFlaps.out(e, e.now(), false, "unhealthy", "healthy probes")
		}
		e.events.add(Event{Type: EventHead, Endpoint: name, To: kind, Message: "excluded: " + reason + flap})
	}
}

func (ep *endpoint) excluded(kind string) bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	_, ok := ep.exclusions[kind]
	return ok
}

// Include lifts an exclusion of the given kind. An unhealthy endpoint is
// let back in with hysteresis, as a lagging one is: after probes.recover
// healthy probes in a row (a Solana node hovering at its "behind" mark
// went in and out on every probe), more after it flapped (rejoinflaps.go).
func (e *Engine) Include(name, kind string) {
	ep, ok := e.byName[name]
	if !ok || kind == ExcludeAhead {
		return
	}
	need := ep.healthFlaps.needNow(e.cfg.Probes.Recover)
	ep.mu.Lock()
	_, had := ep.exclusions[kind]
	if had && kind == ExcludeUnhealthy {
		if ep.healthyGood++; int64(ep.healthyGood) < need {
			ep.mu.Unlock()
			return
		}
	}
	delete(ep.exclusions, kind)
	ep.mu.Unlock()
	if !had {
		return
	}
	msg := "readmitted: " + kind + " cleared"
	if kind == ExcludeUnhealthy {
		ep.healthFlaps.in(e.now(), need)
		why := "probes.recover"
		if need > int64(e.cfg.Probes.Recover) {
			why = "doubled for its flaps"
		}
		msg += fmt.Sprintf(" after %d %s in a row (%s)", need, Plural(need, "healthy probe", "healthy probes"), why)
	}
	e.events.add(Event{Type: EventHead, Endpoint: name, From: kind, Message: msg})
}

// exclusionList returns the endpoint's exclusions as "kind: reason", sorted.
func (ep *endpoint) exclusionList() []string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(ep.exclusions) == 0 {
		return nil
	}
	out := make([]string, 0, len(ep.exclusions))
	for k, v := range ep.exclusions {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}
