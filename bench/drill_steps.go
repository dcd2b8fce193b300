package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// inFlightSlack is how many attempts of the drill's own load and of the
// probes can be in flight when a breaker opens and fail after it: the
// drill sends one read at a time, probes one probe at a time.
const inFlightSlack = 2

// pollOnce reads the status after waiting d.
func (d *drill) pollOnce(ctx context.Context, wait time.Duration) (engine.Snapshot, error) {
	select {
	case <-ctx.Done():
		return engine.Snapshot{}, ctx.Err()
	case <-time.After(wait):
	}
	return d.status(ctx)
}

// inject: the fault on the serving endpoint.
func (d *drill) inject(ctx context.Context, s *DrillStep) error {
	evs, err := d.admin.events(ctx, 0)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		d.injectSeq = max(d.injectSeq, ev.Seq)
	}
	if d.before, err = d.status(ctx); err != nil {
		return err
	}
	// The fault ends by itself after the longest the drill keeps it on
	// (the cut-out and traffic-moved waits and a margin): a drill killed
	// outright (SIGKILL) cannot clear it, and left it on for good.
	spec := map[string]any{"mode": d.cfg.Mode, "duration": d.faultSpan().String()}
	if d.cfg.Mode == "latency" {
		spec["latency"] = d.cfg.Latency.String()
	}
	d.injectedAt = time.Now()
	// Before the call: its answer may be lost (an interruption, a proxy's
	// error) after the fault went in; clearing no fault is harmless.
	d.injected = true
	faulted, err := d.admin.injectFault(ctx, d.endpoint, spec)
	if err != nil {
		return err
	}
	d.inFlightAtFault = faulted.InFlight
	body, _ := json.Marshal(spec)
	s.Evidence = append(s.Evidence, fmt.Sprintf("POST /v1/endpoints/%s/fault %s", d.endpoint, body))
	for _, ev := range d.since(ctx, d.injectSeq) {
		if ev.Type == engine.EventFault && ev.Endpoint == d.endpoint {
			s.Evidence = append(s.Evidence, d.describeEvent(ev))
		}
	}
	st, err := d.status(ctx)
	if err != nil {
		return err
	}
	if ep, _ := st.Endpoint(d.endpoint); ep.Fault == nil || string(ep.Fault.Mode) != d.cfg.Mode {
		return fail(s, "/v1/status shows no %s fault on %s after injecting it", d.cfg.Mode, d.endpoint)
	}
	s.Summary = fmt.Sprintf("%s fault on %s", d.cfg.Mode, d.endpoint)
	return nil
}

// faultSpan is how long the drill's fault lasts unless the drill clears
// it first: the cut-out and traffic-moved steps' waits, and faultMargin.
func (d *drill) faultSpan() time.Duration { return 2*d.cfg.StepTimeout + faultMargin }

const faultMargin = 30 * time.Second

// cutOutBy is how the mode's fault takes an endpoint out of routing; for
// a latency fault, its breaker opening or the router ranking it behind
// the others (drill_deranked.go), which ranked says.
func (d *drill) cutOutBy(st engine.Snapshot, ep engine.EndpointSnapshot) (out bool, how string, ranked bool) {
	switch d.cfg.Mode {
	case "http429":
		return !ep.BackoffUntil.IsZero(), "backing off after HTTP 429", false
	case "stale":
		return ep.LagExcluded, fmt.Sprintf("lagging %d behind the pool's head", ep.Lag), false
	case "latency":
		if ep.Breaker.State == engine.BreakerClosed {
			if behind, _ := d.rankedBehind(st, ep); behind {
				return true, "ranked behind the others by the router's cost, its breaker closed: slow, not hung", true
			}
		}
	}
	return ep.Breaker.State != engine.BreakerClosed, "breaker " + ep.Breaker.State.String(), false
}

// cutBy says whether ev is the transition that took the faulted endpoint
// out of routing: its breaker opening, or its lag excluding it (stale). A
// 429's back-off widens to the endpoint only at its second method: no
// single event times it.
func (d *drill) cutBy(ev engine.Event) bool {
	switch d.cfg.Mode {
	case "http429":
		return false
	case "stale":
		return ev.Type == engine.EventHead && ev.To == "lagging"
	}
	return ev.Type == engine.EventBreaker && ev.To == engine.BreakerOpen.String()
}

// cutOut: out of routing within breaker.failures failed attempts.
func (d *drill) cutOut(ctx context.Context, s *DrillStep) error {
	st, ok, err := d.poll(ctx, d.cfg.StepTimeout, func(st engine.Snapshot) bool {
		ep, _ := st.Endpoint(d.endpoint)
		out, _, _ := d.cutOutBy(st, ep)
		return out
	})
	if err != nil {
		return err
	}
	d.cutAt = time.Now()
	ep, _ := st.Endpoint(d.endpoint)
	b, _ := d.before.Endpoint(d.endpoint)
	sent := attempts(ep.Accounting) - attempts(b.Accounting)
	failed := ep.Accounting.Failures - b.Accounting.Failures
	// Outrun as the engine counts them toward its hang rule (the status's
	// outrun_unanswered): not a loser that answered, passed its deadline
	// (that is a failure) or lost to an attempt given more time.
	outrun := ep.Accounting.OutrunUnanswered - b.Accounting.OutrunUnanswered
	s.Evidence = append(s.Evidence, fmt.Sprintf("since the fault: %d client attempts sent to %s, %d attempts failed (probes included), %d outrun by hedges unanswered (outrun_unanswered; %d cancelled losers in all)",
		sent, d.endpoint, failed, outrun, ep.Accounting.Losers-b.Accounting.Losers))
	// The cut is timed by the engine's event of it when there is one: the
	// status that showed it came a poll and a status read later.
	cutAt := d.cutAt
	for _, ev := range d.since(ctx, d.injectSeq) {
		if ev.Endpoint == d.endpoint && ev.Type != engine.EventFault && ev.Type != engine.EventFailover {
			s.Evidence = append(s.Evidence, d.describeEvent(ev))
			if cutAt == d.cutAt && d.cutBy(ev) && ev.Time.Before(cutAt) {
				cutAt = ev.Time
			}
		}
	}
	f := d.settings.BreakerFailures
	_, how, ranked := d.cutOutBy(st, ep)
	if ok && ranked {
		d.rankedOut = true
		_, costs := d.rankedBehind(st, ep)
		s.Evidence = append(s.Evidence, costs)
	}
	if !ok {
		why := ""
		if ep.Breaker.HeldClosed {
			// The engine keeps part of the pool eligible whatever fails:
			// not a failover fault, but a pool too small for this drill now.
			out := 0
			for _, o := range st.Endpoints {
				if !o.Routable && o.Name != d.endpoint {
					out++
				}
			}
			why = fmt.Sprintf("; its breaker is held closed by breaker.max_open_share: with %d of the %d endpoints already out of routing, no more breakers may open (drill a pool with every endpoint routable)", out, len(st.Endpoints))
		}
		return fail(s, "%s was not cut out within %s: %d attempts sent to it since the fault, %d failed; %s (%d consecutive failures, breaker.failures %d), routable %v%s",
			d.endpoint, d.cfg.StepTimeout, sent, failed, how, ep.Breaker.ConsecutiveFailures, f, ep.Routable, why)
	}
	took := cutAt.Sub(d.injectedAt).Round(time.Millisecond)
	bound := cutOutBoundOf(d.cfg.Mode, f)
	limit, what := bound.limit, bound.what
	switch d.cfg.Mode {
	case "http429":
		failed = sent
	case "latency", "timeout", "unreachable":
		failed = max(failed, overdue(ep)-overdue(b))
	}
	// Client traffic beside the drill's (attempts in flight as the fault
	// came, past the drill's read and a probe): such an attempt may still
	// succeed, and a success starts the run of failures again
	// (breaker.failures - 1 more each); and traffic that busy has as many
	// attempts in flight when the breaker opens, to fail after it.
	others := max(0, d.inFlightAtFault-inFlightSlack)
	busy := int64(f) * others
	if d.cfg.Mode == "http429" {
		busy = others // no run to start again: the first 429 backs off
	}
	if others > 0 {
		s.Evidence = append(s.Evidence, fmt.Sprintf("other clients' attempts in flight on %s as the fault came: %d (a success starts the run of failures again)", d.endpoint, others))
	}
	if limit >= 0 && d.load != nil && failed > limit+busy+inFlightSlack {
		if busy > 0 {
			return fail(s, "%s was cut out (%s) only after %s; the limit is %d (breaker.failures), plus %d for the other clients' %s in flight as the fault came (a success starts the run of failures again; as many may be in flight at the cut), plus %d of the drill's and the probes'",
				d.endpoint, how, engine.Count(failed, what), limit, busy, engine.Count(others, "attempt"), inFlightSlack)
		}
		return fail(s, "%s was cut out (%s) only after %s; the limit is %d (breaker.failures) plus %d that may have been in flight",
			d.endpoint, how, engine.Count(failed, what), limit, inFlightSlack)
	}
	if hidden := bound.outrun; hidden >= 0 && d.load != nil && outrun > hidden+inFlightSlack {
		deadline, wait := hangRuleWait(d.before, st, d.endpoint)
		if cutAt.Sub(d.injectedAt) > wait {
			return fail(s, "%s was cut out (%s) only after %s; the limit is %d (2 × breaker.failures) plus %d that may have been in flight, or as many as reach it until it has been silent for its attempt deadline (%s), but it was cut %s after the fault",
				d.endpoint, how, engine.Count(outrun, "outrun attempt"), hidden, inFlightSlack, deadline.Round(time.Millisecond), took)
		}
		s.Evidence = append(s.Evidence, fmt.Sprintf("%s, past 2 × breaker.failures (%d): the engine's hang rule also waits until %s has been silent for its attempt deadline (%s), and every attempt sent to it meanwhile is one more; it was cut %s after the fault, within that deadline, the hedge delay and %s for the loss that passes it",
			engine.Count(outrun, "outrun attempt"), hidden, d.endpoint, deadline.Round(time.Millisecond), took, hangRuleGrace))
	}
	switch {
	case d.rankedOut:
		s.Summary = fmt.Sprintf("%s cut out (%s) after %s sent to it (%d failed or overdue, %d outrun by hedges), %s after the fault",
			d.endpoint, how, engine.Count(sent, "client attempt"), failed, outrun, took)
	case d.cfg.Mode == "http429" && failed == 0:
		// A probe met the 429 first: it backs off the whole endpoint.
		s.Summary = fmt.Sprintf("%s cut out by a probe's HTTP 429 before any client attempt reached it (%s), %s after the fault", d.endpoint, how, took)
	case limit >= 0:
		after := engine.Count(failed, what)
		if hidden := engine.Count(outrun, "attempt") + " outrun by hedges"; outrun > 0 && d.cfg.Mode != "http429" {
			if failed == 0 {
				after = hidden
			} else {
				after += " and " + hidden
			}
		}
		s.Summary = fmt.Sprintf("%s cut out after %s (%s), %s after the fault", d.endpoint, after, how, took)
	default:
		s.Summary = fmt.Sprintf("%s cut out (%s), %s after the fault", d.endpoint, how, took)
	}
	if limit >= 0 && d.load == nil {
		s.Summary += "; the attempt bound is not checked without the drill's own load"
	}
	return nil
}

// cutOutBound is what the cut-out step holds a mode's endpoint to: at
// most limit attempts of the kind what (-1: none, lag decides), and at
// most outrun attempts outrun by hedges (-1: not counted), each plus
// inFlightSlack.
type cutOutBound struct {
	limit  int64
	what   string
	outrun int64
}

func cutOutBoundOf(mode string, failures int) cutOutBound {
	b := cutOutBound{limit: int64(failures), what: "failed attempt", outrun: int64(2 * failures)}
	switch mode {
	case "http429":
		// A 429 backs off its method; the second method's (the drill reads
		// two) widens it to the endpoint, as does a probe's.
		b = cutOutBound{limit: 2, what: "attempt", outrun: -1}
	case "stale":
		b = cutOutBound{limit: -1, outrun: -1} // lag, not attempts, decides
	case "latency", "timeout", "unreachable":
		// A slow or hung endpoint is charged at the attempt's deadline; the
		// attempt (or a probe listening for a late answer) may end later,
		// as a late answer or a failure.
		b.what = "failed or overdue attempt"
	}
	// Attempts outrun by hedges are no failures: a hang hedging hides
	// trips the breaker after 2 × breaker.failures of them.
	return b
}

// DrillCutOutRule says what the cut-out step checks for a fault of mode,
// with breaker.failures failures, in the words of a question ("checks that
// …"): the bounds cutOut holds the endpoint to, in-flight slack included.
// ownLoad: the drill sends reads of its own (without, it bounds nothing).
func DrillCutOutRule(mode string, failures int, ownLoad bool) string {
	b := cutOutBoundOf(mode, failures)
	how := "its breaker cuts it out"
	switch {
	case mode == "stale":
		return "it is cut out for lagging past chain.max_head_lag"
	case mode == "http429":
		how = "it backs off as a whole after HTTP 429s (one per method of the drill's two)"
	case mode == "latency":
		how = "its breaker cuts it out, or the router ranks it behind the others by its routing cost (answering late, it is slow, not hung),"
	}
	if !ownLoad {
		return how + " (the attempts it takes first are not bounded without the drill's own reads)"
	}
	s := how + " within " + engine.Count(b.limit, b.what)
	if mode != "http429" {
		s = fmt.Sprintf("%s within breaker.failures (%d) %ss", how, b.limit, b.what)
	}
	s += fmt.Sprintf(", plus up to %d that were in flight (more when other clients' attempts were in flight as the fault came)", inFlightSlack)
	if b.outrun >= 0 {
		s += fmt.Sprintf(" (attempts outrun by hedges: up to %d, 2 × breaker.failures, plus the same, or more when it is cut within its attempt deadline of the fault, as the engine's hang rule waits for that silence)", b.outrun)
	}
	return s
}

// moved: the reads go to the other endpoints.
func (d *drill) moved(ctx context.Context, s *DrillStep) error {
	const want = 10
	before, err := d.status(ctx)
	if err != nil {
		return err
	}
	if d.load == nil {
		after, err := d.pollOnce(ctx, time.Second)
		if err != nil {
			return err
		}
		a, _ := after.Endpoint(d.endpoint)
		b, _ := before.Endpoint(d.endpoint)
		sent := attempts(a.Accounting) - attempts(b.Accounting)
		total := after.Totals.Requests - before.Totals.Requests
		s.Evidence = append(s.Evidence, fmt.Sprintf("over a second: %d client requests, %d attempts to %s", total, sent, d.endpoint))
		if total == 0 && sent == 0 {
			// Nothing moved because nothing was sent: no verdict, not a
			// pass (it said "no client attempt went to alpha" of an idle
			// instance, and PASSED).
			return d.noTraffic(ctx, "0 client requests in a second after the cut-out")
		}
		if sent > 1 {
			return fail(s, "%s still takes client attempts after it was cut out: %d in a second", d.endpoint, sent)
		}
		s.Summary = fmt.Sprintf("no client attempt went to %s in a second (%d client requests)", d.endpoint, total)
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, d.cfg.StepTimeout)
	reads := d.load.waitReads(wctx, d.cutAt, want+1)
	cancel()
	if len(reads) < want+1 {
		return fail(s, "only %d reads came back within %s after the cut-out", len(reads), d.cfg.StepTimeout)
	}
	reads = reads[1 : want+1] // the first may have been in flight at the cut-out
	by := map[string]int{}
	for _, r := range reads {
		by[r.endpoint]++
	}
	after, err := d.status(ctx)
	if err != nil {
		return err
	}
	a, _ := after.Endpoint(d.endpoint)
	b, _ := before.Endpoint(d.endpoint)
	sent := attempts(a.Accounting) - attempts(b.Accounting)
	s.Evidence = append(s.Evidence, fmt.Sprintf("the next %d reads were answered by %s", want, countsOf(by)),
		fmt.Sprintf("client attempts to %s meanwhile: %d", d.endpoint, sent))
	if by[d.endpoint] > 0 || sent > 1 {
		return fail(s, "reads still go to %s after it was cut out: %d of %d answered by it, %d attempts sent to it", d.endpoint, by[d.endpoint], want, sent)
	}
	s.Summary = fmt.Sprintf("the next %d reads went to %s", want, countsOf(by))
	return nil
}

// noErrors: no read failed since the fault.
func (d *drill) noErrors(ctx context.Context, s *DrillStep) error {
	st, err := d.status(ctx)
	if err != nil {
		return err
	}
	clientErrors := st.Totals.ClientErrors - d.before.Totals.ClientErrors
	s.Evidence = append(s.Evidence, fmt.Sprintf("the instance's own error answers since the fault (every method, every client): %d", clientErrors))
	if d.load != nil {
		reads := d.load.since(d.injectedAt)
		var failed []drillRead
		retried := 0
		for _, r := range reads {
			if !r.ok {
				failed = append(failed, r)
			}
			if r.attempts > 1 {
				retried++
			}
		}
		s.Evidence = append(s.Evidence, fmt.Sprintf("the drill's reads since the fault: %d, %d of them answered after 2 or more attempts, %d failed", len(reads), retried, len(failed)))
		if len(failed) > 0 {
			return fail(s, "%d of %d reads since the fault failed; the first: %s", len(failed), len(reads), failed[0].err)
		}
	}
	if clientErrors > 0 {
		return fail(s, "the instance answered %d client requests with its own error since the fault%s", clientErrors, d.ownErrorsNamed(ctx))
	}
	if requests := st.Totals.Requests - d.before.Totals.Requests; d.load == nil && requests == 0 {
		return d.noTraffic(ctx, "0 client requests since the fault")
	}
	s.Summary = "no read failed since the fault"
	d.noErrorsSeen = st.Totals.ClientErrors
	return nil
}

// noErrorsSince looks at the instance's error answers once more as the
// drill ends: a request the faulted endpoint held as the no-client-errors
// step looked (a write, which cannot fail over, sent to it before the cut)
// may fail afterwards, at its deadline, and the drill said PASSED with
// that error behind it. The step's report is then revised, and the drill
// fails.
func (d *drill) noErrorsSince(ctx context.Context) error {
	st, err := d.status(ctx)
	if err != nil {
		return err
	}
	seen := d.noErrorsSeen - d.before.Totals.ClientErrors
	late := st.Totals.ClientErrors - d.noErrorsSeen
	i := slices.IndexFunc(d.report.Steps, func(s DrillStep) bool { return s.Name == StepNoErrors })
	if late <= 0 || i < 0 {
		return nil
	}
	s := d.report.Steps[i]
	s.State = StepFailed
	s.Evidence = append(slices.Clip(s.Evidence), fmt.Sprintf("the instance's own error answers since the fault, as the drill ended: %d", late+seen))
	err = fail(&s, "the instance answered %d client requests with its own error since the fault (every method, every client), %d of them after this step had looked: a request in flight then (one the faulted endpoint held: a write cannot fail over) or sent since%s", late+seen, late, d.ownErrorsNamed(ctx))
	d.report.Steps[i] = s
	d.onStep(s)
	return err
}

// ownErrorsNamed names the latest requests since the fault that the
// instance answered with its own error, from its traces: a count alone
// left the operator to guess which request and endpoint failed. "" when
// it keeps no trace of them (tracing off, or an older instance).
func (d *drill) ownErrorsNamed(ctx context.Context) string {
	traces, err := d.admin.failedRequests(ctx)
	if err != nil {
		return ""
	}
	var named []string
	for _, tr := range traces {
		if tr.Outcome != "error" || tr.Start.Before(d.injectedAt) {
			continue
		}
		named = append(named, describeFailed(tr, d.injectedAt))
		if len(named) == 3 {
			break
		}
	}
	if len(named) == 0 {
		return ""
	}
	return "; the latest: " + strings.Join(named, "; ")
}

// describeFailed is a failed request's trace in a sentence: its method, id,
// when, its error code, and where its attempts went.
func describeFailed(tr engine.RequestTrace, since time.Time) string {
	took := time.Duration(tr.LatencyMS * float64(time.Millisecond)).Round(time.Millisecond)
	s := fmt.Sprintf("%s (request %s) at +%s, error %d after %s", tr.Method, tr.ID, tr.Start.Sub(since).Round(time.Millisecond), tr.ErrorCode, took)
	var went []string
	for _, a := range tr.Attempts {
		went = append(went, a.Endpoint+" "+a.Outcome)
	}
	if len(went) == 0 {
		return s + ", sent to no endpoint"
	}
	return s + ", attempts: " + strings.Join(went, ", ")
}

// clear: the fault removed.
func (d *drill) clear(ctx context.Context, s *DrillStep) error {
	d.clearedAt = time.Now() // before the call, as injectedAt: the fault may be gone before it returns
	if err := d.admin.clearFault(ctx, d.endpoint); err != nil {
		return err
	}
	d.injected = false
	s.Evidence = append(s.Evidence, fmt.Sprintf("DELETE /v1/endpoints/%s/fault at +%s", d.endpoint, d.clearedAt.Sub(d.injectedAt).Round(time.Millisecond)))
	st, err := d.status(ctx)
	if err != nil {
		return err
	}
	if ep, _ := st.Endpoint(d.endpoint); ep.Fault != nil {
		return fail(s, "/v1/status still shows a %s fault on %s", ep.Fault.Mode, d.endpoint)
	}
	s.Summary = "fault cleared on " + d.endpoint
	return nil
}

func mostOf(by map[string]int) string {
	best := ""
	for _, k := range slices.Sorted(maps.Keys(by)) {
		if best == "" || by[k] > by[best] {
			best = k
		}
	}
	return best
}

func countsOf(by map[string]int) string {
	keys := slices.Sorted(maps.Keys(by))
	slices.SortStableFunc(keys, func(a, b string) int { return by[b] - by[a] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		name := k
		if name == "" {
			name = "(no header)"
		}
		parts[i] = fmt.Sprintf("%s %d", name, by[k])
	}
	return strings.Join(parts, ", ")
}

// overdue counts the attempts (probes included) that passed their deadline
// without an answer, every method.
func overdue(ep engine.EndpointSnapshot) int64 {
	var n int64
	for _, m := range ep.Methods {
		n += m.Overdue
	}
	return n
}

// noTraffic stops a drill without its own reads (--no-load) that found no
// client traffic to judge a step by: no verdict, as a step that passed on
// nothing said of an idle instance.
func (d *drill) noTraffic(ctx context.Context, seen string) error {
	if d.stopRun == nil {
		return fmt.Errorf("no client traffic to judge: %s", seen)
	}
	d.stopRun(&drillStopped{text: fmt.Sprintf("the instance had no client traffic to judge: %s (--no-load relies on its own traffic)", seen)})
	return context.Cause(ctx)
}
