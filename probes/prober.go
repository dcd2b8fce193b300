package probes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// prober probes one endpoint. Its loop is the only goroutine that probes
// that endpoint, so at most one probe is in flight per endpoint: a probe
// slower than the interval delays the next one instead of overlapping it.
type prober struct {
	name     string
	eng      *engine.Engine
	spec     chainSpec
	ids      *identityTracker
	interval time.Duration
	// identityEvery is probes.identity_every: how many rounds apart the
	// identity is asked besides at start and on reconnect. Every round by
	// default: only this question (or a client's own) finds out an endpoint
	// moved to another chain while it keeps answering. Asked every 12th
	// round (a minute at the default interval), such an endpoint had 149
	// eth_getBalance answers of the other chain relayed in 53 s; asked only
	// on reconnect, it took 94 of 100 reads (an incident audit).
	identityEvery int
	log           *slog.Logger

	// needIdentity is set at start and after any failed probe: the next
	// probe that gets through is a reconnect, and the endpoint may have come
	// back on another chain.
	needIdentity bool
	started      bool
	// sinceIdentity counts the rounds since the identity was last asked.
	sinceIdentity int
}

// needsIdentity says whether this round asks the endpoint's identity: at
// start, on reconnect, and every identityEvery rounds.
func (p *prober) needsIdentity() bool {
	return p.needIdentity || p.sinceIdentity >= p.identityEvery
}

var noParams = json.RawMessage("[]")

func (p *prober) run(ctx context.Context) {
	var due, ended time.Time
	repeat(ctx, func() time.Duration {
		if wait := time.Until(p.sooner(due, ended)); wait > 0 {
			return min(wait, trialGap)
		}
		began := time.Now()
		if !p.tick(ctx) {
			return -1
		}
		due, ended = began.Add(p.interval), time.Now()
		return 0 // the next look says how long to wait
	})
}

// sooner is when the next round is due: due (a probes.interval after the
// last round began), or sooner when the endpoint's breaker waits for a
// trial or it was charged a hang it has said nothing since (a trialGap
// after the last round ended), or its cooldown ends first. The loop looks
// every trialGap between rounds: a charge made by a client attempt just
// after a round waited out the whole interval.
func (p *prober) sooner(due, ended time.Time) time.Time {
	if p.eng.NeedsTrial(p.name) || p.eng.NeedsCheck(p.name) {
		due = minTime(due, ended.Add(trialGap))
	} else if t := p.eng.NextTrialAt(p.name); !t.IsZero() {
		due = minTime(due, t)
	}
	return due
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// repeat runs round at once and then again after the wait it returns, until
// ctx ends or it returns a negative wait.
func repeat(ctx context.Context, round func() time.Duration) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		wait := round()
		if wait < 0 {
			return
		}
		timer.Reset(wait)
	}
}

// trialGap is how soon a breaker waiting for a trial is probed again: the
// probes are its trials (engine.UseProbeTrials), and readmission takes
// breaker.successes of them, which should not take that many intervals.
const trialGap = 200 * time.Millisecond

// tick runs one round of probes; false means the runner is closing. The
// identity probe, when due, goes first and the head probe after it has
// ended, not beside it: each probe's RTT is timed from its own send and
// recorded under its own method (engine.Probe), so the eth_blockNumber
// (getSlot) figure is that request's alone; sent at once, the two would
// need a second connection to the endpoint (a dial in one of the RTTs) and
// contend for a half-open breaker's one trial. Identity first, so that a
// head from another chain is never taken.
func (p *prober) tick(ctx context.Context) bool {
	p.sinceIdentity++
	if p.needsIdentity() {
		res, ok := p.probe(ctx, p.spec.identityMethod)
		if ok {
			p.sinceIdentity = 0
			if id, valid := p.spec.parseIdentity(res.Body); valid {
				p.ids.record(p.name, id)
			} else {
				p.log.Debug("probe: identity answer unusable", "endpoint", p.name, "method", p.spec.identityMethod)
			}
			p.needIdentity = false
		}
		if !p.started {
			p.started = true
			p.ids.firstDone(p.name)
			// Heads wait for the pool's chain to be known, so that an
			// endpoint on another chain never sets the pool's head.
			select {
			case <-p.ids.settled:
			case <-ctx.Done():
				return false
			}
		}
		if !ok {
			return ctx.Err() == nil
		}
	}

	res, ok := p.probe(ctx, p.spec.headMethod)
	if !p.ids.isWrong(p.name) {
		if head, valid := p.spec.parseHead(res.Body); ok && valid {
			p.eng.ObserveProbeHead(p.name, head)
		} else if res.Info.Valid {
			// Answered, but not its head (an error, a null): its head is
			// unknown from now on, not carried on as if it kept up. No
			// answer at all is the breaker's to judge.
			why := res.Err
			switch {
			case why != "":
			case res.Info.HasError:
				why = fmt.Sprintf("JSON-RPC error %d: %s", res.Info.ErrCode, res.Info.ErrMessage)
			default:
				why = p.spec.headMethod + " answered without one"
			}
			p.eng.ObserveProbeNoHead(p.name, why)
		}
	}
	if !ok {
		return ctx.Err() == nil
	}

	if p.spec.healthMethod != "" {
		res, ok := p.probe(ctx, p.spec.healthMethod)
		if !ok {
			return ctx.Err() == nil
		}
		healthy, reason, known := healthVerdict(p.spec.healthMethod, res.Body)
		switch {
		case !known:
		case healthy:
			p.eng.Include(p.name, engine.ExcludeUnhealthy)
		default:
			p.eng.Exclude(p.name, engine.ExcludeUnhealthy, reason)
		}
	}
	return ctx.Err() == nil
}

// probe sends one probe, which the engine bounds and judges (engine.Probe).
// ok means a JSON-RPC answer came back; any other outcome makes the next
// round a reconnect.
func (p *prober) probe(ctx context.Context, method string) (engine.ProbeResult, bool) {
	res, err := p.eng.Probe(ctx, p.name, method, noParams)
	if errors.Is(err, engine.ErrBackingOff) {
		return res, false // nothing sent; no verdict on the endpoint
	}
	if err != nil {
		p.log.Warn("probe", "endpoint", p.name, "method", method, "err", err)
		return res, false
	}
	if !res.OK {
		if ctx.Err() == nil {
			p.log.Debug("probe failed", "endpoint", p.name, "method", method, "err", res.Err, "rtt", res.RTT, "deadline", res.Deadline)
		}
		p.needIdentity = true
		return res, false
	}
	return res, true
}
