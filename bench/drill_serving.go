package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// warmReads is how many of its own reads the drill looks at to tell which
// endpoint serves.
const warmReads = 20

// servingBound is how long the drill waits for the router to settle on
// the best endpoint before it calls the choice wrong: its first reads find
// every window empty (a variable so that tests can shorten it).
var servingBound = 15 * time.Second

// serving: which endpoint serves, and is it the best healthy one.
func (d *drill) serving(ctx context.Context, s *DrillStep) error {
	st, err := d.status(ctx)
	if err != nil {
		return err
	}
	d.settings = st.Settings
	if d.settings.BreakerFailures == 0 {
		return fail(s, "the instance's /v1/status has no settings (breaker thresholds): it is older than the drill")
	}
	// A fault already in force (an operator's, or one a drill killed
	// outright left to run out) would be measured beside the drill's: its
	// endpoint's open breaker even keeps the drill's from opening
	// (breaker.max_open_share), which read as a failed cut-out.
	for _, ep := range st.Endpoints {
		if f := ep.Fault; f != nil {
			ends := "until cleared"
			if !f.Expires.IsZero() {
				ends = "ends by itself at " + f.Expires.Local().Format("15:04:05")
			}
			return fail(s, "%s has a %s fault in force (since %s, %s): a drill now would measure it beside its own; clear it (DELETE /v1/endpoints/%s/fault) or wait for it to end",
				ep.Name, f.Mode, f.Since.Local().Format("15:04:05"), ends, ep.Name)
		}
	}
	counted := time.Now() // st's requests count every read that ended since but the one in flight
	deadline := counted.Add(servingBound)
	if d.load != nil {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		reads := d.load.waitReads(wctx, d.started, warmReads)
		cancel()
		if len(reads) < warmReads && ctx.Err() != nil {
			// Stopped while it waited: the bound was never reached.
			return fmt.Errorf("stopped after %s, %d of the %d reads it waits for back", time.Since(counted).Round(time.Millisecond), len(reads), warmReads)
		}
		if len(reads) < warmReads {
			return fail(s, "only %d of %d reads came back within %s before any fault", len(reads), warmReads, servingBound)
		}
		if err := d.readsReachIt(ctx, st, counted); err != nil {
			return err
		}
	}
	for {
		name, byMethod, seen, st, err := d.observeServing(ctx, st)
		if err != nil {
			return err
		}
		evidence, verdict := d.judgeServing(s, st, name, byMethod)
		if verdict == nil || time.Now().After(deadline) {
			s.Evidence = append(append(s.Evidence, seen), evidence...)
			return verdict
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readsReachIt checks that the drill's reads at --target are the
// instance's: its client requests since before (its status read by
// counted) are at least the reads that ended since, but the one that may
// have been in flight then. Reads through another rpcdash whose endpoints
// have the same names passed "serving" ("a serves and is the best healthy
// endpoint"), then failed "cut out" ("a was not cut out within 10s: 0
// attempts sent to it"), a fault the reads never met.
func (d *drill) readsReachIt(ctx context.Context, before engine.Snapshot, counted time.Time) error {
	// An answer without X-Rpcdash-Endpoint came from no rpcdash: the
	// drill said "gamma serves" of reads answered by another program,
	// then "gamma was not cut out".
	all := d.load.since(d.started)
	answered := 0
	for _, r := range all {
		if r.ok && r.endpoint == "" {
			return fmt.Errorf("the drill's reads at %s come back without %s: it is not an rpcdash, or not the one whose admin API the drill faults", engine.ShownURL(d.load.url), HeaderEndpoint)
		}
		if r.ok {
			answered++
		}
	}
	// None answered: nothing answers there (a dead --target), which
	// "19 of them were answered" said of reads all refused.
	if answered == 0 && len(all) > 0 {
		return fmt.Errorf("the drill's reads at %s: nothing answers there: none of its %d reads was answered, the last: %s", engine.ShownURL(d.load.url), len(all), all[len(all)-1].err)
	}
	reads := 0 // answered since counted: a read that failed is no request of the instance's
	for _, r := range d.load.since(counted) {
		if r.ok {
			reads++
		}
	}
	now, err := d.status(ctx)
	if err != nil {
		return err
	}
	if got := now.Totals.Requests - before.Totals.Requests; got < int64(reads-1) {
		return fmt.Errorf("the drill's reads at %s are not this instance's: %d of them were answered while the instance at the admin API took %d client requests: the drill would fault an endpoint its reads never meet",
			engine.ShownURL(d.load.url), reads, got)
	}
	return nil
}

// observeServing says which endpoint serves now: the one that answered
// most of the drill's last reads, or (without load) took the most client
// attempts in a second; "" when there was no traffic. byMethod counts the
// last reads' endpoints by method (nil without load). It fails on a read
// that failed before any fault.
func (d *drill) observeServing(ctx context.Context, prev engine.Snapshot) (string, map[string]map[string]int, string, engine.Snapshot, error) {
	by := map[string]int{}
	if d.load != nil {
		reads := d.load.since(d.started)
		for _, r := range reads {
			if !r.ok {
				return "", nil, "", prev, fmt.Errorf("a read failed before any fault (%s): the pool is not healthy enough to drill", r.err)
			}
		}
		byMethod := map[string]map[string]int{}
		for _, r := range reads[max(len(reads)-warmReads, 0):] {
			by[r.endpoint]++
			if byMethod[r.method] == nil {
				byMethod[r.method] = map[string]int{}
			}
			byMethod[r.method][r.endpoint]++
		}
		st, err := d.status(ctx)
		return mostOf(by), byMethod, fmt.Sprintf("the last %d reads were answered by %s", warmReads, countsOf(by)), st, err
	}
	st, err := d.pollOnce(ctx, time.Second)
	if err != nil {
		return "", nil, "", st, err
	}
	for _, ep := range st.Endpoints {
		if b, ok := prev.Endpoint(ep.Name); ok {
			by[ep.Name] = int(attempts(ep.Accounting) - attempts(b.Accounting))
		}
	}
	if name := mostOf(by); by[name] > 0 {
		return name, nil, "client attempts in a second: " + countsOf(by), st, nil
	}
	return "", nil, "no client traffic in a second (--no-load): the serving endpoint is the best by the router's cost", st, nil
}

// judgeServing checks that the serving endpoint is healthy and the best
// routable one as the router ranks them: by its routing cost (within
// router.tolerance of the least), for each method of the drill's reads
// the endpoint that answered most of them, over all methods without the
// drill's reads; and records it as the one to fault.
func (d *drill) judgeServing(s *DrillStep, st engine.Snapshot, name string, byMethod map[string]map[string]int) ([]string, error) {
	var evidence []string
	routable := 0
	for _, ep := range st.Endpoints {
		state := "out of routing"
		if ep.Routable {
			state = "routable"
			routable++
		}
		evidence = append(evidence, fmt.Sprintf("%s: %s, breaker %s, routing %s, p50 %.1f ms, p99 %.1f ms over %d answers",
			ep.Name, state, ep.Breaker.State, costWords(ep.Score), msOf(ep.Latency.P50), msOf(ep.Latency.P99), ep.Latency.Count))
	}
	if routable < 2 {
		return evidence, fail(s, "%d routable endpoint(s): nothing to fail over to, a drill would take the pool down", routable)
	}
	tol := d.settings.RouterTolerance
	if name == "" {
		best, _, _ := bestBy(st, "", "")
		name = best.Name
	}
	ep, ok := st.Endpoint(name)
	switch {
	case !ok:
		return evidence, fail(s, "reads were answered by %q, which /v1/status does not list", name)
	case !ep.Routable || ep.Breaker.State != engine.BreakerClosed || ep.Fault != nil || ep.Drained:
		return evidence, fail(s, "%s serves but is not healthy: routable %v, breaker %s, drained %v, fault %v", name, ep.Routable, ep.Breaker.State, ep.Drained, ep.Fault != nil)
	}
	// Who served each method, against the router's cost for it.
	served := map[string]string{"": name}
	if len(byMethod) > 0 {
		served = map[string]string{}
		for m, by := range byMethod {
			served[m] = mostOf(by)
		}
	}
	var costs []string
	for _, m := range slices.Sorted(maps.Keys(served)) {
		who, _ := st.Endpoint(served[m])
		best, least, _ := bestBy(st, m, "")
		mine := steadyCost(scoreFor(who, m))
		what := "the reads"
		if m != "" {
			what = m
		}
		if !engine.CostTies(mine, least, tol) {
			return evidence, fail(s, "%s serves %s, but %s is better by the router's cost: %s against %s, beyond router.tolerance %g, for %s",
				who.Name, what, best.Name, costWords(scoreFor(who, m)), costWords(scoreFor(best, m)), tol, servingBound)
		}
		if m != "" {
			costs = append(costs, fmt.Sprintf("%s %.1f ms", m, mine))
		} else {
			costs = append(costs, fmt.Sprintf("%.1f ms", mine))
		}
	}
	d.endpoint, d.report.Endpoint = name, name
	s.Summary = fmt.Sprintf("%s serves and is the best healthy endpoint by the router's cost (%s; %d routable)", name, strings.Join(costs, ", "), routable)
	return evidence, nil
}
