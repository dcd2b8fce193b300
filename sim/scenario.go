package sim

import (
	"flag"
	"fmt"
	"math"
	"slices"
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
	if err := s.ValidateFlags(nil); err != nil {
		return err
	}
	l := s.Latency
	switch {
	case l.TailProb > 0 && l.TailMax < l.TailMin:
		return fmt.Errorf("--tail-max: %s is below --tail-min %s", l.TailMax, l.TailMin)
	case l.Correlated > 0 && l.TailProb <= 0:
		return fmt.Errorf("--correlated: %v shares tail events, but --tail is 0", l.Correlated)
	}
	if err := l.validate(); err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	return nil
}

// ValidateFlags reports the first of the given flags (given holds flag
// names, as cli.Given returns them) whose value is out of range, naming
// the flag and the range. Only the given ones are checked: with presets
// the others are not in force. A value given is never read as "the
// default": --incident 0s is refused, where left out it means
// DefaultIncident. nil checks every flag.
func (s Scenario) ValidateFlags(given map[string]bool) error {
	l := s.Latency
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for _, c := range []struct {
		flag, want string
		bad        bool
		got        any
	}{
		{"endpoints", "1 to 64", s.Endpoints < 1 || s.Endpoints > 64, s.Endpoints},
		{"median", "a duration of 0s or more", l.Median < 0, l.Median},
		{"sigma", "a number of 0 or more", !(l.Sigma >= 0) || !finite(l.Sigma), l.Sigma},
		{"tail", "[0, 1]", !(l.TailProb >= 0 && l.TailProb <= 1), l.TailProb},
		{"tail-min", "a duration of 0s or more", l.TailMin < 0, l.TailMin},
		{"tail-max", "a duration of 0s or more", l.TailMax < 0, l.TailMax},
		{"capacity", "requests per second, 0 or more (0: no limit)", !(s.Capacity >= 0) || !finite(s.Capacity), s.Capacity},
		{"correlated", "[0, 1]", !isShare(l.Correlated), l.Correlated},
		{"incident", "a positive duration", l.Incident < 0 || given != nil && l.Incident == 0, l.Incident},
	} {
		if (given == nil || given[c.flag]) && c.bad {
			return fmt.Errorf("--%s: want %s, got %v", c.flag, c.want, c.got)
		}
	}
	return nil
}

// InertFlag reports the first of the given flags (given holds flag names,
// as cli.Given returns them) that changes none of ls, the latencies of the
// sims it was given for, naming the flag that would give it a meaning:
// --tail-min and --tail-max bound tail times, which only a --tail above 0
// draws, and --incident is the length of the windows only a --correlated
// above 0 shares. A value that changes nothing is the user's mistake to be
// told of, not one to drop in silence.
func InertFlag(given map[string]bool, ls ...Latency) error {
	tails := func(l Latency) bool { return l.TailProb > 0 }
	for _, c := range []struct {
		flag, partner, why string
		used               func(Latency) bool
	}{
		{"tail-min", "--tail", "it bounds tail times, and no sim has a tail", tails},
		{"tail-max", "--tail", "it bounds tail times, and no sim has a tail", tails},
		{"incident", "--correlated", "it is the length of the windows shared tails fall in, and no sim shares its tails",
			func(l Latency) bool { return l.Correlated > 0 }},
	} {
		if given[c.flag] && !slices.ContainsFunc(ls, c.used) {
			return fmt.Errorf("--%s goes with %s above 0: %s", c.flag, c.partner, c.why)
		}
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
