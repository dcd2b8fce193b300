package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rpcdash/rpcdash/sim"
)

// CompareConfig is one comparison: the same upstreams, load and arrival
// schedule for every policy.
type CompareConfig struct {
	Upstreams []sim.Config // started afresh for each policy; a zero Seed becomes its index+1
	Policies  []Policy
	Load      Load          // its URL is set per run
	Warmup    time.Duration // discarded open-loop traffic at Load.Rate before each measured run
	Start     EngineStarter
	Progress  io.Writer // one line per run; nil = silent
}

// Comparison is the outcome: one Report per policy, in order, and the
// model's prediction for each hedged run's final delay, computed from the
// first unhedged engine run's measured latencies ("model@…") and from a
// direct run's ("model(direct)@…").
type Comparison struct {
	Method      string       `json:"method"`
	Rate        float64      `json:"rate"`
	Duration    string       `json:"duration"`
	Arrivals    string       `json:"arrivals"`
	Runs        []Report     `json:"runs"`
	Predictions []Prediction `json:"predictions,omitempty"`
}

// WriteTable writes the comparison as aligned plain text.
func (c *Comparison) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s, %s arrivals at %g req/s for %s\n", c.Method, c.Arrivals, c.Rate, c.Duration); err != nil {
		return err
	}
	return WriteTable(w, c.Runs, c.Predictions)
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// Compare runs every policy in turn and predicts the hedged runs.
func Compare(ctx context.Context, cfg CompareConfig) (*Comparison, error) {
	if cfg.Start == nil {
		return nil, errors.New("bench: no EngineStarter")
	}
	if len(cfg.Upstreams) == 0 || len(cfg.Policies) == 0 {
		return nil, errors.New("bench: a comparison needs upstreams and policies")
	}
	c := &Comparison{Method: cfg.Load.Method, Rate: cfg.Load.Rate, Duration: cfg.Load.Duration.String(),
		Arrivals: cfg.Load.Arrivals.String()}
	type baseline struct {
		prefix string
		dist   *Dist
	}
	var bases []baseline
	seen := map[string]bool{}
	for _, p := range cfg.Policies {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "running %s (%s warm-up, %s measured)\n", p.Name, cfg.Warmup, cfg.Load.Duration)
		}
		rep, res, err := runPolicy(ctx, cfg, p)
		if err != nil {
			return nil, fmt.Errorf("bench: policy %s: %w", p.Name, err)
		}
		c.Runs = append(c.Runs, rep)
		prefix := "model@"
		if p.Direct {
			prefix = "model(direct)@"
		}
		if p.Hedge.Enabled || seen[prefix] {
			continue
		}
		// An empty unhedged run leaves no baseline and no prediction.
		if d, err := DistFromSamples(res.Latencies()); err == nil {
			seen[prefix] = true
			bases = append(bases, baseline{prefix, d})
		}
	}
	for _, b := range bases {
		for i, p := range cfg.Policies {
			if d := c.Runs[i].HedgeDelayMS; p.Hedge.Enabled && d > 0 {
				delay := time.Duration(d * float64(time.Millisecond))
				c.Predictions = append(c.Predictions, b.dist.Predict(b.prefix+p.Name, delay))
			}
		}
	}
	return c, nil
}

// runPolicy measures one policy against fresh sims (and a fresh engine).
func runPolicy(ctx context.Context, cfg CompareConfig, p Policy) (Report, *Result, error) {
	ups := make([]sim.Config, len(cfg.Upstreams))
	for i, u := range cfg.Upstreams {
		if u.Seed == 0 {
			u.Seed = int64(i + 1)
		}
		if u.Name == "" {
			u.Name = fmt.Sprintf("sim%d", i)
		}
		ups[i] = u
	}
	sims, err := sim.StartSet(ups, "127.0.0.1")
	if err != nil {
		return Report{}, nil, err
	}
	defer sim.CloseAll(sims)
	if p.Direct {
		return runDirect(ctx, cfg, p, sims[0].URL())
	}
	return runEngine(ctx, cfg, p, sims)
}

// runEngine measures the load through a fresh engine in front of sims.
func runEngine(ctx context.Context, cfg CompareConfig, p Policy, sims []*sim.Upstream) (Report, *Result, error) {
	spec := EngineSpec{Hedge: p.Hedge}
	for i, u := range sims {
		// Distinct provider and region: separate failure domains, so
		// hedges go to another upstream.
		spec.Endpoints = append(spec.Endpoints, EndpointSpec{Name: u.Name(), URL: u.URL(),
			Provider: fmt.Sprintf("provider-%d", i), Region: fmt.Sprintf("region-%d", i)})
	}
	eng, err := cfg.Start(spec)
	if err != nil {
		return Report{}, nil, fmt.Errorf("start engine: %w", err)
	}
	client := NewClient()
	stop := func() error {
		client.CloseIdleConnections()
		return eng.Stop()
	}

	load := cfg.Load
	load.URL, load.Client = eng.RPCURL, client
	if err := warmUp(ctx, load, cfg.Warmup); err != nil {
		return Report{}, nil, errors.Join(err, stop())
	}
	before, err := readStatus(ctx, client, eng.AdminURL, load.Method)
	if err != nil {
		return Report{}, nil, errors.Join(err, stop())
	}
	var delays []float64
	var polled chan struct{}
	runCtx, endRun := context.WithCancel(ctx)
	if p.Hedge.Enabled {
		polled = make(chan struct{})
		go func() {
			defer close(polled)
			delays = pollDelay(runCtx, client, eng.AdminURL, load.Method, delayPollEvery(load.Duration))
		}()
	}
	res, err := Run(ctx, load)
	endRun()
	if polled != nil {
		<-polled
	}
	if err != nil {
		return Report{}, nil, errors.Join(err, stop())
	}
	after, err := readStatus(ctx, client, eng.AdminURL, load.Method)
	if err != nil {
		return Report{}, nil, errors.Join(err, stop())
	}
	rep := Summarize(p.Name, res)
	rep.Engine = &EngineCounts{
		Primary:   after.Primary - before.Primary,
		Hedge:     after.Hedge - before.Hedge,
		HedgesWon: after.HedgesWon - before.HedgesWon,
		Failover:  after.Failover - before.Failover,
	}
	if p.Hedge.Enabled {
		rep.HedgeDelayMS, rep.DelaySource = after.DelayMS, after.DelaySource
		delays = append(delays, after.DelayMS)
		rep.DelayMinMS, rep.DelayMaxMS = slices.Min(delays), slices.Max(delays)
	}
	return rep, res, stop()
}

// warmUp sends load's traffic for d and discards it, so that the engine's
// windows and auto delay are warm when measuring starts.
func warmUp(ctx context.Context, load Load, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	load.Duration, load.Count, load.Seed = d, 0, load.Seed+1
	if _, err := Run(ctx, load); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	return nil
}

// runDirect measures the same load sent straight to one upstream.
func runDirect(ctx context.Context, cfg CompareConfig, p Policy, url string) (Report, *Result, error) {
	client := NewClient()
	defer client.CloseIdleConnections()
	load := cfg.Load
	load.URL, load.Client = url, client
	if err := warmUp(ctx, load, cfg.Warmup); err != nil {
		return Report{}, nil, err
	}
	res, err := Run(ctx, load)
	if err != nil {
		return Report{}, nil, err
	}
	rep := Summarize(p.Name, res)
	// Without an engine there are no X-Rpcdash headers: one request is
	// exactly one upstream attempt.
	rep.Attempts, rep.Amplification = int64(rep.Requests), 1
	return rep, res, nil
}
