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
	Body []byte        // the answer (a copy), nil on failure
	RTT  time.Duration // time to the answer or the failure
	OK   bool          // a JSON-RPC answer (it may still carry a JSON-RPC error)
	Info jsonrpc.ResponseInfo
	Err  string // redacted cause when !OK
}

// Probe sends one request to an endpoint through the fault layer (so an
// injected fault is seen by probes too) and feeds RTT and outcome into the
// same endpoint state as client traffic. The breaker hears the verdict when
// it is closed, or when the probe can be a half-open trial; during the
// cooldown a probe only observes.
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
	a := &attempt{ep: ep, role: rolePrimary, trial: trial, start: e.now(), stats: ep.stats(method)}
	if !verdict {
		a.settled.Store(true) // no breaker verdict to give
	}
	ep.startAttempt(a.start)
	rep := e.roundTrip(ctx, ep, req, false)
	ep.inflight.Add(-1)
	res := ProbeResult{RTT: e.now().Sub(a.start), OK: rep.out == outAnswer || rep.out.errorAnswer(), Info: rep.info, Err: rep.cause}
	if rep.body != nil {
		res.Body = append([]byte(nil), rep.body.Bytes()...)
	}
	e.recordProbe(a, rep, res.RTT)
	putBuf(rep.body)
	return res, nil
}

// recordProbe feeds a probe outcome into the same endpoint state as client
// attempts (recordAnswer, recordRateLimit, countFailure).
func (e *Engine) recordProbe(a *attempt, rep upstreamReply, rtt time.Duration) {
	ep, ms := a.ep, a.stats
	end := a.start.Add(rtt)
	switch rep.out {
	case outAnswer:
		e.recordAnswer(a, rtt, end)
	case outRateLimit:
		e.recordRateLimit(a, "", rep, end) // not one method's: the whole endpoint
	case outCancelled, outUnsupported:
		if rep.out.responded() {
			ep.heard(end)
		}
		ep.rates.Count(window.Attempts)
		ms.rates.Count(window.Attempts)
		ep.series.ended(end)
		if a.settle() {
			ep.breaker.Release(a.trial)
		}
	default:
		if rep.out.responded() {
			ep.heard(end)
		}
		ep.noAnswer(rep.out)
		if !a.settle() {
			ep.rates.Count(window.Attempts, window.Failure)
			ms.rates.Count(window.Attempts)
			ep.series.failed(end)
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

// evaluateLag re-checks ep; probe says whether this observation counts
// towards readmission.
func (e *Engine) evaluateLag(ep *endpoint, probe bool) {
	lag := e.lagOf(ep)
	bound := e.cfg.Chain.MaxHeadLag
	if lag > bound {
		ep.lagGood.Store(0)
		if !ep.lagExcluded.Swap(true) {
			e.events.add(Event{Type: EventHead, Endpoint: ep.Name, From: "in-sync", To: "lagging",
				Message: fmt.Sprintf("%d behind the pool's head %d (chain.max_head_lag %d): out of routing for tip-dependent reads", lag, e.heads.top.Load(), bound)})
		}
		return
	}
	if !ep.lagExcluded.Load() || !probe {
		return
	}
	if n := ep.lagGood.Add(1); n >= int64(e.cfg.Probes.Recover) {
		if ep.lagExcluded.Swap(false) {
			ep.lagGood.Store(0)
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
	reason = redact.Sanitize(reason, redact.MaxShown) // it may quote what the endpoint answered
	ep.mu.Lock()
	_, had := ep.exclusions[kind]
	if ep.exclusions == nil {
		ep.exclusions = map[string]string{}
	}
	ep.exclusions[kind] = reason
	ep.mu.Unlock()
	if kind == ExcludeWrongChain {
		e.forgetHead(ep)
	}
	if !had {
		e.events.add(Event{Type: EventHead, Endpoint: name, To: kind, Message: "excluded: " + reason})
	}
}

func (ep *endpoint) excluded(kind string) bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	_, ok := ep.exclusions[kind]
	return ok
}

// Include lifts an exclusion of the given kind.
func (e *Engine) Include(name, kind string) {
	ep, ok := e.byName[name]
	if !ok || kind == ExcludeAhead {
		return
	}
	ep.mu.Lock()
	_, had := ep.exclusions[kind]
	delete(ep.exclusions, kind)
	ep.mu.Unlock()
	if had {
		e.events.add(Event{Type: EventHead, Endpoint: name, From: kind, Message: "readmitted: " + kind + " cleared"})
	}
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
