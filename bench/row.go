package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// environment is what the rows run against.
type environment struct {
	rpcURL      string
	admin       *Admin
	directURL   string
	controlURLs []string
	endpoints   int
	capacity    float64
	client      *http.Client
	stop        func() error

	// The built-in sims, kept for the whole run, and a fresh engine in
	// front of them for each row: a row must not inherit the last one's
	// latency windows (an overloaded row would move the next one's auto
	// delay and routing). A --admin instance keeps its windows across rows.
	sims  []*sim.Upstream
	seeds []int64
	epoch *sim.Epoch
	spec  EngineSpec
	start EngineStarter
}

// freshEngine starts the row's engine in front of the built-in sims; the
// returned stop ends it.
func (env *environment) freshEngine() (func() error, error) {
	eng, err := env.start(env.spec)
	if err != nil {
		return nil, fmt.Errorf("start engine: %w", err)
	}
	env.rpcURL = eng.RPCURL
	env.admin = &Admin{URL: eng.AdminURL, Client: env.client}
	return func() error {
		env.client.CloseIdleConnections()
		return eng.Stop()
	}, nil
}

// environment starts the built-in sims and an engine in front of them, or
// points at the target.
func (cfg CompareConfig) environment(ctx context.Context) (*environment, error) {
	client := NewClient()
	env := &environment{client: client, stop: func() error { client.CloseIdleConnections(); return nil }}
	t := cfg.Target
	if t.URL != "" {
		env.rpcURL, env.capacity = t.URL, t.Capacity
		if t.Admin.URL != "" {
			a := t.Admin
			a.Client, a.AllowRemote = client, t.AllowRemote
			env.admin = &a
		} else {
			env.endpoints = 1
		}
		if t.ControlURL != "" {
			env.controlURLs = []string{t.ControlURL}
		}
		return env, nil
	}
	env.epoch = sim.NewEpoch(time.Now())
	cfgs := cfg.Scenario.Configs(env.epoch)
	sims, err := sim.StartSet(cfgs, "127.0.0.1")
	if err != nil {
		return nil, err
	}
	for i, u := range sims {
		// Distinct providers and regions: separate failure domains, so
		// hedges go to another upstream.
		env.spec.Endpoints = append(env.spec.Endpoints, EndpointSpec{Name: u.Name(), URL: u.URL(),
			Provider: fmt.Sprintf("provider-%d", i), Region: fmt.Sprintf("region-%d", i)})
		env.controlURLs = append(env.controlURLs, u.URL())
		env.seeds = append(env.seeds, cfgs[i].Seed)
	}
	env.sims, env.directURL, env.endpoints, env.capacity = sims, sims[0].URL(), len(sims), cfg.Scenario.Capacity
	env.start = cfg.Start
	env.spec.MaxExtra = cfg.MaxExtra
	env.stop = func() error {
		client.CloseIdleConnections()
		return sim.CloseAll(sims)
	}
	return env, nil
}

// engineCounters are an engine's cumulative counters at one moment.
type engineCounters struct {
	methods  map[string]engine.MethodStatus
	outcomes map[string]float64
}

func (env *environment) counters(ctx context.Context, methods []string) (engineCounters, error) {
	st, err := env.admin.status(ctx)
	if err != nil {
		return engineCounters{}, err
	}
	out, err := env.admin.attemptOutcomes(ctx, methods)
	return engineCounters{methods: st.Methods, outcomes: out}, err
}

// runRow puts one policy in force and measures it.
func (env *environment) runRow(ctx context.Context, cfg CompareConfig, i int, p Policy, budget float64) (row Row, err error) {
	if env.start != nil && p.Kind != KindDirect {
		stop, serr := env.freshEngine()
		if serr != nil {
			return Row{}, serr
		}
		defer func() {
			err = errors.Join(err, stop())
			env.admin = nil
		}()
	}
	w := cfg.Workload
	methods := w.Mix.Methods()
	load := Load{Workload: w, URL: env.rpcURL, Params: cfg.Params, ControlURLs: env.controlURLs, Row: i,
		AllowRemote: cfg.Target.AllowRemote, Client: env.client}
	engineRow := env.admin != nil && p.Kind != KindDirect
	switch {
	case p.Kind == KindDirect:
		load.URL = env.directURL
	case env.admin != nil:
		if err := env.admin.setHedge(ctx, p.update(budget)); err != nil {
			return Row{}, err
		}
	}
	for k, u := range env.sims {
		// Every row starts from the seed on idle upstreams: an overloaded
		// row must not leave its queue to the next.
		u.Reseed(env.seeds[k])
		u.ResetQueue()
	}
	load.OnStart = func(origin time.Time) {
		if env.epoch != nil {
			env.epoch.Restart(origin)
		}
		cfg.Progress.row(i, p.Name, origin)
	}
	var (
		before     engineCounters
		beforeErr  error
		simsBefore []sim.Counters
		delays     []float64
		polling    sync.WaitGroup
	)
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	load.OnMeasure = func() {
		simsBefore = env.simCounters()
		if engineRow {
			before, beforeErr = env.counters(ctx, methods)
			if p.Kind == KindAuto {
				polling.Go(func() { delays = pollDelay(pollCtx, env.admin, w.Mix.heaviest(), delayPollEvery(w.Measured())) })
			}
		}
	}
	res, err := Run(ctx, load)
	stopPolling()
	polling.Wait()
	if err != nil {
		return Row{}, err
	}
	row = summarize(p, res, w, cfg.Deadline)
	if env.sims != nil {
		row.fromUpstreams(env, simsBefore, env.simCounters(), w.Measured())
	}
	if !engineRow {
		row.finish(env, w, p, nil, nil, nil)
		return row, nil
	}
	if beforeErr != nil {
		return Row{}, beforeErr
	}
	after, err := env.counters(ctx, methods)
	if err != nil {
		return Row{}, err
	}
	row.finish(env, w, p, &before, &after, delays)
	return row, nil
}

func (env *environment) simCounters() []sim.Counters {
	out := make([]sim.Counters, len(env.sims))
	for i, u := range env.sims {
		out[i] = u.Counters()
	}
	return out
}

// fromUpstreams adds what the built-in sims saw over the measured span:
// the waste (every request whose client went away, hedge losers and
// attempts cut at their deadline alike, and the upstream time they used;
// finish takes the engine's losers instead when they are more)
// and the busiest endpoint's load, which routing can push past its
// capacity while the pool's stays below.
func (r *Row) fromUpstreams(env *environment, before, after []sim.Counters, span time.Duration) {
	w := Wasted{Source: "upstreams"}
	busiest, most := "", int64(-1)
	for i := range after {
		// The calls the cancelled requests carried: each call of a batch is
		// one upstream request, as in the upstream column.
		w.Cancelled += after[i].CancelledCalls - before[i].CancelledCalls
		w.Seconds += after[i].CancelledSeconds - before[i].CancelledSeconds
		if n := after[i].Total - before[i].Total; n > most {
			busiest, most = env.sims[i].Name(), n
		}
	}
	r.Wasted = &w
	if env.capacity > 0 && most >= 0 {
		load, _ := loadCheck(float64(most)/span.Seconds(), 1, env.capacity)
		r.MaxLoad, r.MaxLoadEndpoint = &load, busiest
	}
}

// finish adds what the engine knows (upstream requests with those of
// calls that timed out, 429s, waste, the delay in force) and the load
// check.
func (r *Row) finish(env *environment, w Workload, p Policy, before, after *engineCounters, delays []float64) {
	methods := w.Mix.Methods()
	calls := r.Calls.N
	if before != nil {
		// The answers' X-Rpcdash-Attempts are exact; only calls that got
		// no answer need the engine's count, which also holds a few
		// attempts of warm-up calls still in flight at the boundary.
		if r.Incomplete+r.Transport > 0 {
			var up int64
			for _, m := range methods {
				up += attempts(after.methods[m].AccountSnapshot) - attempts(before.methods[m].AccountSnapshot)
			}
			r.Upstream = max(r.Upstream, up)
			r.Amplification = amplification(r.Upstream, calls)
		}
		var failovers int64
		for _, m := range methods {
			failovers += after.methods[m].Failover - before.methods[m].Failover
		}
		r.Failovers = &failovers
		if n := sumValues(after.outcomes) - sumValues(before.outcomes); n > 0 {
			r.Share429 = (after.outcomes["rate_limited"] - before.outcomes["rate_limited"]) / n
		}
		// The built-in sims count every request whose client went away,
		// the engine every loser: a loser past its attempt deadline is
		// kept running to its answer as a tail sample, which no sim sees
		// cancelled (an off row's failovers read "wasted 0"). The fuller
		// count is the truer one.
		if wasted := wastedBetween(before.methods, after.methods, methods); r.Wasted == nil || wasted.Cancelled > r.Wasted.Cancelled {
			r.Wasted = &wasted
		}
		if p.Hedged() {
			r.HedgesRefused = refusedBetween(before.methods, after.methods, methods)
			if w := heldBackWarning(r.HedgesRefused, calls); w != "" {
				r.Warnings = append(r.Warnings, w)
			}
		}
		r.checkMethodSettings(after.methods, methods, p)
	}
	switch p.Kind {
	case KindImmediate:
		r.DelayMS = ptr(0.0)
	case KindFixed:
		r.DelayMS = ptr(msOf(p.Delay))
	case KindAuto:
		if len(delays) > 0 {
			r.DelayMS = ptr(mean(delays))
			r.DelayMinMS, r.DelayMaxMS = slices.Min(delays), slices.Max(delays)
		} else {
			r.Warnings = append(r.Warnings, "the auto delay could not be read during the run: no model column")
		}
	}
	if env.capacity > 0 {
		endpoints := max(env.endpoints, 1)
		offered := float64(r.Upstream)
		if r.Control != nil {
			ctl := float64(r.Control.Calls.N)
			if p.Kind == KindDirect && len(env.controlURLs) > 0 {
				ctl /= float64(len(env.controlURLs)) // the direct endpoint's share of them
			}
			offered += ctl
		}
		if p.Kind == KindDirect {
			endpoints = 1
		}
		load, over := loadCheck(offered/w.Measured().Seconds(), endpoints, env.capacity)
		r.Load, r.Overload = &load, over
		switch {
		case over:
			r.Warnings = append(r.Warnings, fmt.Sprintf("load (1+h)·ρ = %.2f ≥ 1: the endpoints are offered more than their capacity; the queue grows without bound and hedging only adds to it", load))
		case r.MaxLoad != nil && *r.MaxLoad >= 1:
			r.Warnings = append(r.Warnings, fmt.Sprintf("the busiest endpoint, %s, was offered %.2f of its capacity: routing concentrated the load where the pool-wide (1+h)·ρ = %.2f does not see it", r.MaxLoadEndpoint, *r.MaxLoad, load))
		}
	}
}

// checkMethodSettings warns when a method of the mix did not run under the
// row's policy (its own hedge.methods settings win over the pool's).
func (r *Row) checkMethodSettings(status map[string]engine.MethodStatus, methods []string, p Policy) {
	for _, m := range methods {
		h := status[m].Hedge
		if h == nil {
			continue
		}
		switch {
		case h.Enabled != p.Hedged():
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s ran with hedging %v, not as the row says: it has its own settings (hedge.methods)", m, onOff(h.Enabled)))
		case p.Kind == KindFixed && h.Delay != p.Delay, p.Kind == KindImmediate && h.Delay != 0:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s ran with a %.1f ms delay, not the row's: it has its own settings (hedge.methods)", m, msOf(h.Delay)))
		}
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func sumValues(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// delayPollEvery samples the delay about twenty times a run, at most once
// every 250 ms.
func delayPollEvery(run time.Duration) time.Duration { return max(run/20, 250*time.Millisecond) }

// pollDelay samples the method's hedge delay until ctx ends: an auto delay
// moves during a run, and the final value alone can mislead.
func pollDelay(ctx context.Context, a *Admin, method string, every time.Duration) []float64 {
	var out []float64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
			if st, err := a.status(ctx); err == nil {
				if h := st.Methods[method].Hedge; h != nil && h.Delay > 0 {
					out = append(out, msOf(h.Delay))
				}
			}
		}
	}
}
