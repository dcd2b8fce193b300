package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// warmReads is how many of its own reads the drill looks at to tell which
// endpoint serves.
const warmReads = 20

// servingBound is how long the drill waits for the router to settle on
// the best endpoint before it calls the choice wrong: its first reads find
// every window empty.
const servingBound = 15 * time.Second

// serving: which endpoint serves, and is it the best healthy one.
func (d *drill) serving(ctx context.Context, s *DrillStep) error {
	st, err := d.admin.status(ctx)
	if err != nil {
		return err
	}
	d.settings = st.Settings
	if d.settings.BreakerFailures == 0 {
		return fail(s, "the instance's /v1/status has no settings (breaker thresholds): it is older than the drill")
	}
	deadline := time.Now().Add(servingBound)
	if d.load != nil {
		wctx, cancel := context.WithDeadline(ctx, deadline)
		reads := d.load.waitReads(wctx, d.started, warmReads)
		cancel()
		if len(reads) < warmReads {
			return fail(s, "only %d of %d reads came back within %s before any fault", len(reads), warmReads, servingBound)
		}
	}
	for {
		name, seen, st, err := d.observeServing(ctx, st)
		if err != nil {
			return err
		}
		evidence, verdict := d.judgeServing(s, st, name)
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

// observeServing says which endpoint serves now: the one that answered
// most of the drill's last reads, or (without load) took the most client
// attempts in a second; "" when there was no traffic. It fails on a read
// that failed before any fault.
func (d *drill) observeServing(ctx context.Context, prev engine.Snapshot) (string, string, engine.Snapshot, error) {
	by := map[string]int{}
	if d.load != nil {
		reads := d.load.since(d.started)
		for _, r := range reads {
			if !r.ok {
				return "", "", prev, fmt.Errorf("a read failed before any fault (%s): the pool is not healthy enough to drill", r.err)
			}
		}
		for _, r := range reads[max(len(reads)-warmReads, 0):] {
			by[r.endpoint]++
		}
		st, err := d.admin.status(ctx)
		return mostOf(by), fmt.Sprintf("the last %d reads were answered by %s", warmReads, countsOf(by)), st, err
	}
	st, err := d.pollOnce(ctx, time.Second)
	if err != nil {
		return "", "", st, err
	}
	for _, ep := range st.Endpoints {
		if b, ok := endpointOf(prev, ep.Name); ok {
			by[ep.Name] = int(attempts(ep.Accounting) - attempts(b.Accounting))
		}
	}
	if name := mostOf(by); by[name] > 0 {
		return name, "client attempts in a second: " + countsOf(by), st, nil
	}
	return "", "no client traffic in a second (--no-load): the serving endpoint is the best by latency", st, nil
}

// judgeServing checks that the serving endpoint is healthy and the best
// routable one (within router.tolerance), and records it as the one to
// fault.
func (d *drill) judgeServing(s *DrillStep, st engine.Snapshot, name string) ([]string, error) {
	var evidence []string
	var routable []engine.EndpointSnapshot
	for _, ep := range st.Endpoints {
		state := "out of routing"
		if ep.Routable {
			state = "routable"
			routable = append(routable, ep)
		}
		evidence = append(evidence, fmt.Sprintf("%s: %s, breaker %s, p50 %.1f ms over %d answers", ep.Name, state, ep.Breaker.State, msOf(ep.Latency.P50), ep.Latency.Count))
	}
	if len(routable) < 2 {
		return evidence, fail(s, "%d routable endpoint(s): nothing to fail over to, a drill would take the pool down", len(routable))
	}
	best := slices.MinFunc(routable, func(a, b engine.EndpointSnapshot) int { return cmp.Compare(a.Latency.P50, b.Latency.P50) })
	if name == "" {
		name = best.Name
	}
	ep, ok := endpointOf(st, name)
	switch {
	case !ok:
		return evidence, fail(s, "reads were answered by %q, which /v1/status does not list", name)
	case !ep.Routable || ep.Breaker.State != engine.BreakerClosed || ep.Fault != nil || ep.Drained:
		return evidence, fail(s, "%s serves but is not healthy: routable %v, breaker %s, drained %v, fault %v", name, ep.Routable, ep.Breaker.State, ep.Drained, ep.Fault != nil)
	case msOf(ep.Latency.P50) > (1+d.settings.RouterTolerance)*msOf(best.Latency.P50)+1:
		return evidence, fail(s, "%s serves, but %s is better: p50 %.1f ms against %.1f ms, beyond router.tolerance %g, for %s",
			name, best.Name, msOf(ep.Latency.P50), msOf(best.Latency.P50), d.settings.RouterTolerance, servingBound)
	}
	d.endpoint, d.report.Endpoint = name, name
	s.Summary = fmt.Sprintf("%s serves and is the best healthy endpoint (p50 %.1f ms; %d routable)", name, msOf(ep.Latency.P50), len(routable))
	return evidence, nil
}
