package sim

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// Scenario is a pool of like upstreams described by a handful of numbers.
// `rpcdash bench` builds its sims from one, `rpcdash sim` takes the same
// flags (RegisterFlags), and a sim:// URL the same values as parameters
// (median, sigma, tail, tail_min, tail_max, capacity, correlated, incident,
// seed and incident_seed), so that a run can be reproduced by hand.
type Scenario struct {
	Endpoints int
	Latency   Latency
	Capacity  float64 // requests per second each endpoint serves before it queues; 0 = no limit
	Seed      int64   // endpoint i draws from Seed·1000+i+1; the incident windows from Seed
}

// TailScenario is the seeds' default: three independent endpoints, each
// lognormal with median 50 ms and σ 0.3, plus a 2 % tail uniform in
// 500–1000 ms, no capacity limit, seed 1.
func TailScenario() Scenario {
	return Scenario{Endpoints: 3, Seed: 1, Latency: Latency{Median: 50 * time.Millisecond, Sigma: 0.3,
		TailProb: 0.02, TailMin: 500 * time.Millisecond, TailMax: time.Second}}
}

// ScenarioFlags are the flag names RegisterFlags defines.
var ScenarioFlags = []string{"median", "sigma", "tail", "tail-min", "tail-max", "endpoints", "capacity", "correlated", "incident", "seed"}

// RegisterFlags defines the scenario flags on fs, with s's values as
// defaults; parsing fs fills s.
func (s *Scenario) RegisterFlags(fs *flag.FlagSet) {
	l := &s.Latency
	fs.DurationVar(&l.Median, "median", l.Median, "median latency of each endpoint")
	fs.Float64Var(&l.Sigma, "sigma", l.Sigma, "lognormal σ of the latency body")
	fs.Float64Var(&l.TailProb, "tail", l.TailProb, "share of answers in the tail")
	fs.DurationVar(&l.TailMin, "tail-min", l.TailMin, "shortest tail time")
	fs.DurationVar(&l.TailMax, "tail-max", l.TailMax, "longest tail time")
	fs.IntVar(&s.Endpoints, "endpoints", s.Endpoints, "number of endpoints")
	fs.Float64Var(&s.Capacity, "capacity", s.Capacity, "requests per second each endpoint serves before it queues (0: no limit)")
	fs.Float64Var(&l.Correlated, "correlated", l.Correlated, "share Q of tail events shared by every endpoint at once (0: independent)")
	fs.DurationVar(&l.Incident, "incident", l.Incident, fmt.Sprintf("length of a shared slow window (default %s when --correlated is set)", DefaultIncident))
	fs.Int64Var(&s.Seed, "seed", s.Seed, "seed of the endpoints' draws and of the incident windows")
}

// Apply sets on c the scenario values whose flags were given (given holds
// flag names), leaving the rest of c (a preset, a URL's values) as it is.
func (s Scenario) Apply(c *Config, index int, given map[string]bool) {
	l := &c.Latency
	set := map[string]func(){
		"median": func() { l.Median = s.Latency.Median }, "sigma": func() { l.Sigma = s.Latency.Sigma },
		"tail": func() { l.TailProb = s.Latency.TailProb }, "tail-min": func() { l.TailMin = s.Latency.TailMin },
		"tail-max": func() { l.TailMax = s.Latency.TailMax }, "capacity": func() { c.Capacity = s.Capacity },
		"correlated": func() { l.Correlated = s.Latency.Correlated }, "incident": func() { l.Incident = s.Latency.Incident },
		"seed": func() { c.Seed, c.IncidentSeed = s.endpointSeed(index), s.Seed },
	}
	for name, f := range set {
		if given[name] {
			f()
		}
	}
}

// Validate reports the first invalid value, naming its flag.
func (s Scenario) Validate() error {
	if s.Endpoints < 1 || s.Endpoints > 64 {
		return fmt.Errorf("--endpoints: want 1 to 64, got %d", s.Endpoints)
	}
	if s.Capacity < 0 {
		return fmt.Errorf("--capacity: must not be negative, got %v", s.Capacity)
	}
	if err := s.Latency.validate(); err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	return nil
}

// Configs are the scenario's upstreams, named sim0, sim1, …, sharing epoch
// (nil: the Unix epoch) and the incident seed.
func (s Scenario) Configs(epoch *Epoch) []Config {
	out := make([]Config, s.Endpoints)
	for i := range out {
		out[i] = Config{Name: fmt.Sprintf("sim%d", i), Latency: s.Latency, Capacity: s.Capacity,
			Seed: s.endpointSeed(i), IncidentSeed: s.Seed, Epoch: epoch}
	}
	return out
}

func (s Scenario) endpointSeed(i int) int64 { return s.Seed*1000 + int64(i) + 1 }

// String says the scenario in one line, with everything needed to repeat it.
func (s Scenario) String() string {
	l := s.Latency.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "%d endpoints, lognormal median %s σ %g", s.Endpoints, l.Median, l.Sigma)
	if l.TailProb > 0 {
		fmt.Fprintf(&b, ", %g%% tails of %s–%s", 100*l.TailProb, l.TailMin, l.TailMax)
		if l.Correlated > 0 {
			fmt.Fprintf(&b, ", correlated %g (shared %s windows, %.3g%% of the time)", l.Correlated, l.Incident, 100*l.sharedShare())
		} else {
			b.WriteString(", independent")
		}
	}
	if s.Capacity > 0 {
		fmt.Fprintf(&b, ", capacity %g req/s each", s.Capacity)
	} else {
		b.WriteString(", no capacity limit")
	}
	fmt.Fprintf(&b, ", seed %d", s.Seed)
	return b.String()
}
