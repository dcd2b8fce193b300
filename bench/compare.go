package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// Target is what a comparison loads: the built-in sims (URL empty), or a
// JSON-RPC endpoint, which with Admin set is a rpcdash whose policies are
// switched between rows.
type Target struct {
	URL         string
	Admin       Admin  // Admin.URL set: switch policies through PUT /v1/hedge
	ControlURL  string // where the control tenant goes when URL is set
	AllowRemote bool
	// Capacity is each endpoint's declared capacity behind URL, for the
	// load check (the built-in sims use the scenario's).
	Capacity float64
}

// CompareConfig is one comparison: the same workload, seed and schedule
// for every row.
type CompareConfig struct {
	Workload Workload
	Params   json.RawMessage // fixed params for every call; nil: unique ones
	Scenario sim.Scenario    // the built-in sims
	Target   Target
	Policies []Policy
	Deadline time.Duration
	MaxExtra int           // hedge.max_extra of the built-in sims' engine (0: the default)
	Start    EngineStarter // starts the engine in front of the built-in sims
	Progress *Progress     // nil: silent
}

// Rows are the policies a comparison runs: one "target" row for a bare
// --target, the policies otherwise.
func (cfg CompareConfig) Rows() []Policy {
	if cfg.Target.URL != "" && cfg.Target.Admin.URL == "" {
		return []Policy{{Name: KindTarget, Kind: KindTarget}}
	}
	return cfg.Policies
}

// Duration is how long the comparison takes, answers aside.
func (cfg CompareConfig) Duration() time.Duration {
	return time.Duration(len(cfg.Rows())) * (cfg.Workload.Warmup + cfg.Workload.Measured())
}

// Compare runs every row in turn against the same target and predicts the
// hedged rows from the unhedged one. A --admin instance's hedging is put
// back as it was at the end, whatever happened.
func Compare(ctx context.Context, cfg CompareConfig) (c *Comparison, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	env, err := cfg.environment(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, env.stop()) }()

	ms := defaultModelSettings() // the built-in rows' fresh engines
	if cfg.MaxExtra > 0 {
		ms.maxExtra = cfg.MaxExtra // --max-extra: what those engines hedge with
	}
	if env.admin != nil {
		st, err := env.admin.status(ctx)
		if err != nil {
			return nil, err
		}
		ms = modelSettings{budget: st.Hedge.Budget, burst: st.Hedge.BudgetBurst, maxExtra: st.Hedge.MaxExtra}
		defer func() {
			// A fresh context: a run cut short by Ctrl-C must still restore.
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if rerr := env.admin.setHedge(rctx, restoreOf(st.Hedge)); rerr != nil {
				err = errors.Join(err, fmt.Errorf("bench: restoring the instance's hedging: %w", rerr))
			}
		}()
		if env.endpoints == 0 {
			env.endpoints = len(st.Endpoints)
		}
	}
	c = cfg.describe(env)
	rows := cfg.Rows()
	cfg.Progress.begin(len(rows), cfg.Workload.Warmup+cfg.Workload.Measured())
	defer cfg.Progress.end()
	for i, p := range rows {
		row, err := env.runRow(ctx, cfg, i, p, ms.budget)
		if err != nil && ctx.Err() != nil && len(c.Rows) > 0 {
			// Stopped (Ctrl-C, SIGTERM): the rows that ran whole are
			// still figures a long run should not lose.
			c.Interrupted = p.Name
			c.Warnings = append(c.Warnings, fmt.Sprintf("interrupted during row %s: the %d row(s) before it ran whole, the rest did not run", p.Name, len(c.Rows)))
			c.model(ms)
			return c, fmt.Errorf("bench: interrupted during row %s (%d of %d rows ran): %w", p.Name, len(c.Rows), len(rows), ctx.Err())
		}
		if err != nil && ctx.Err() != nil {
			// Stopped in the first row: nothing to keep, but said as what
			// it is ("row immediate: context canceled" read as a failure).
			return nil, fmt.Errorf("bench: interrupted during row %s (0 of %d rows ran): %w", p.Name, len(rows), ctx.Err())
		}
		if err != nil {
			return nil, fmt.Errorf("bench: row %s: %w", p.Name, err)
		}
		c.Rows = append(c.Rows, row)
	}
	c.model(ms)
	return c, nil
}

// errAdminNeedsTarget: an instance's admin API switches its policy, but
// the load goes to its JSON-RPC port.
var errAdminNeedsTarget = errors.New("bench: --admin needs --target, the instance's JSON-RPC URL (its server.listen)")

func (cfg CompareConfig) validate() error {
	if err := cfg.Workload.Validate(); err != nil {
		return err
	}
	t := cfg.Target
	switch {
	case len(cfg.Rows()) == 0:
		return errors.New("bench: no policies to compare")
	case t.URL == "" && cfg.Start == nil:
		return errors.New("bench: the built-in sims need an EngineStarter")
	case t.URL == "" && t.Admin.URL != "":
		return errAdminNeedsTarget
	case t.URL != "" && cfg.Workload.ControlShare > 0 && t.ControlURL == "":
		return errors.New("bench: --control-share against --target needs --control-target, a JSON-RPC URL that does not hedge")
	case t.Admin.URL != "" && slices.ContainsFunc(cfg.Policies, func(p Policy) bool { return p.Kind == KindDirect }):
		return errors.New("bench: the direct policy needs an upstream's URL, which --admin does not give: leave it out")
	}
	if t.URL == "" {
		return cfg.Scenario.Validate()
	}
	return nil
}

// model fills the model columns from the baseline: the direct row (the
// bare single-attempt distribution) if there is one, else the first
// unhedged routed row; of those, the first whose calls all answered and
// whose endpoints were not overloaded, since the model reads a failed or
// queued row's answers as if they were one attempt's service time. The
// model is the engine's Forecast, the one the tuning view and the admin
// API use, at each row's delay under the hedge budget it ran with.
func (c *Comparison) model(ms modelSettings) {
	clean := func(r Row) bool { return r.OK == r.Calls.N && !r.Overload && (r.MaxLoad == nil || *r.MaxLoad < 1) }
	base := -1
	for _, kind := range []string{KindDirect, KindOff} {
		if i := slices.IndexFunc(c.Rows, func(r Row) bool { return r.Kind == kind && clean(r) }); base < 0 && i >= 0 {
			base = i
		}
	}
	if base < 0 {
		base = slices.IndexFunc(c.Rows, func(r Row) bool { return r.Kind == KindDirect || r.Kind == KindOff })
		if base < 0 {
			return
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("the model reads the %s row, which had failures or an overloaded endpoint: its predictions are not the hedging model's", c.Rows[base].Policy))
	}
	if len(c.Rows[base].baseline) == 0 {
		return
	}
	dist := engine.DistributionOf(c.Rows[base].baseline, nil)
	c.Baseline, c.ModelMaxExtra = c.Rows[base].Policy, ms.maxExtra
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.DelayMS == nil {
			continue
		}
		budget := ms.budget
		if r.Kind == KindImmediate {
			budget = 1 // the row lifts it (Policy.update)
		}
		f := engine.Forecast(engine.ForecastInput{Primary: dist, Delay: time.Duration(*r.DelayMS * float64(time.Millisecond)),
			MaxExtra: ms.maxExtra, Budget: budget, Burst: ms.burst})
		r.ModelP99MS, r.ModelExtraLoad, r.ModelCapped = ptr(msOf(f.P99)), ptr(f.ExtraLoad), f.BudgetCapped
		r.modelStability(f.ExtraLoad)
	}
}

// modelStability scales the row's measured load to the upstream requests
// the model's amplification would send. The model holds only where a
// duplicate slows nothing down (the tail-geometry seed's fixed-distribution
// case): at (1+h)·ρ ≥ 1 its finite p99 is a figure drawn through the
// instability, so the row says so rather than show it as a forecast.
func (r *Row) modelStability(extra float64) {
	r.ModelLoad, r.ModelUnstable = nil, false
	if r.Load == nil {
		return
	}
	ctl := 0.0
	if r.Control != nil {
		ctl = float64(r.Control.Calls.N)
	}
	sent := float64(r.Upstream) + ctl
	if sent <= 0 {
		return
	}
	load := *r.Load * (float64(r.Calls.N)*(1+extra) + ctl) / sent
	r.ModelLoad = &load
	if load < 1 {
		return
	}
	r.ModelUnstable = true
	r.Warnings = append(r.Warnings, fmt.Sprintf("model p99 %s ms is outside the model's stable region: at its amplification %.3f the endpoints would be offered (1+h)·ρ = %.2f ≥ 1 of their capacity, where the queue has no steady state and duplicates slow every request", f1(*r.ModelP99MS), 1+extra, load))
}

// modelSettings are the hedging settings the rows ran with, as the model
// needs them.
type modelSettings struct {
	budget, burst float64
	maxExtra      int
}

// defaultModelSettings are a fresh engine's (the built-in sims' rows).
func defaultModelSettings() modelSettings {
	c := engine.Default()
	return modelSettings{budget: c.Hedge.Budget, burst: c.Hedge.BudgetBurst, maxExtra: c.Hedge.MaxExtra}
}

// describe is the report's head: the target and the workload.
func (cfg CompareConfig) describe(env *environment) *Comparison {
	w := cfg.Workload
	c := &Comparison{Workload: WorkloadInfo{Mix: w.Mix.String(), Arrivals: w.Arrivals.String(), Rate: w.Rate,
		Measured: w.Measured().String(), Count: w.Count, Warmup: w.Warmup.String(), Seed: w.Seed,
		Fanout: w.Fanout.String(), ControlShare: w.ControlShare, Timeout: w.timeout().String()}}
	if w.Batch {
		c.Workload.Fanout, c.Workload.Batch = "none", w.Fanout.calls()
		c.Workload.Notes = append(c.Workload.Notes, "each batch goes upstream whole: rpcdash hedges it at hedge.batch_delay_ms (its status), not at the method's delay the delay column shows and the model assumes")
	}
	if cfg.Deadline > 0 {
		c.Workload.Deadline = cfg.Deadline.String()
	}
	if cfg.Params != nil {
		c.Workload.Notes = append(c.Workload.Notes, "every call carries the same --params: an upstream may cache them")
	}
	for _, m := range w.Mix.Methods() {
		if _, ok := uniqueParams(m, 0, 0); !ok && cfg.Params == nil {
			c.Workload.Notes = append(c.Workload.Notes, m+" is sent with [] (no params bench can make unique): its calls are all alike")
		}
	}
	switch {
	case cfg.Target.URL == "":
		c.Target = "built-in sims: " + cfg.Scenario.String()
		in := cfg.Scenario.Latency.Incidents(cfg.Scenario.Seed)
		c.Incidents = in.Count(w.Warmup, w.Warmup+w.Measured())
		if cfg.Scenario.Latency.Correlated > 0 {
			// S(t)·S(t−d) holds for independent endpoints only: with shared
			// incidents the model's p99 was 146 ms where 552 were measured,
			// and nothing on the row said so (seeds audit, stop 56).
			c.Workload.Notes = append(c.Workload.Notes, "the model column assumes endpoints slow apart; --correlated makes them slow together, so its p99 is optimistic: the measured p99 is the figure")
		}
		if cfg.Scenario.Latency.Correlated > 0 && c.Incidents < 3 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("only %d shared incident windows fall in each measured span: the correlated figures rest on few events (run longer)", c.Incidents))
		}
		if cfg.Scenario.Latency.Correlated == 0 && cfg.Scenario.Capacity == 0 && cfg.Scenario.Latency.TailProb > 0 {
			// A duplicate escapes a slow answer only when the slowness is
			// the one request's: the independent, unloaded case is the best
			// one hedging can meet.
			c.Workload.Notes = append(c.Workload.Notes, "independent tails and no capacity limit: the optimistic case for hedging; --correlated Q (incidents every endpoint shares) and --capacity (load that duplicates add to) show the others")
		}
	case cfg.Target.Admin.URL != "":
		c.Target = fmt.Sprintf("rpcdash at %s (admin %s)", engine.ShownURL(cfg.Target.URL), engine.ShownURL(cfg.Target.Admin.URL))
		c.Warnings = append(c.Warnings, "upstream requests, 429s and waste come from the instance's counters: they assume bench is its only client of these methods during the run")
	default:
		c.Target = engine.ShownURL(cfg.Target.URL)
	}
	if cfg.Target.ControlURL != "" {
		c.Target += "; control tenant to " + engine.ShownURL(cfg.Target.ControlURL)
	}
	return c
}
