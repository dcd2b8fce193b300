package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Policy kinds, in the order a comparison usually lists them.
const (
	KindDirect    = "direct"    // straight to one endpoint: no router, no hedging
	KindOff       = "off"       // routed, not hedged
	KindImmediate = "immediate" // a duplicate at once (a real zero delay), budget lifted
	KindFixed     = "fixed"     // a duplicate after a fixed delay
	KindAuto      = "auto"      // a duplicate after the method's latency quantile
	KindTarget    = "target"    // --target without --admin: whatever the target does
)

// Policy is one row of a comparison.
type Policy struct {
	Name     string        `json:"name"`
	Kind     string        `json:"kind"`
	Delay    time.Duration `json:"delay_ns,omitempty"` // fixed
	Quantile float64       `json:"quantile,omitempty"` // auto
}

// Hedged says whether the policy sends duplicates.
func (p Policy) Hedged() bool {
	return p.Kind == KindImmediate || p.Kind == KindFixed || p.Kind == KindAuto
}

// update is the PUT /v1/hedge body that puts the policy in force; budget
// is the instance's own, which every row but immediate keeps.
func (p Policy) update(budget float64) engine.HedgeUpdate {
	on, off := true, false
	str := func(s string) *string { return &s }
	switch p.Kind {
	case KindOff:
		return engine.HedgeUpdate{Enabled: &off}
	case KindImmediate:
		lifted := 1.0
		return engine.HedgeUpdate{Enabled: &on, Delay: str("0s"), Budget: &lifted}
	case KindFixed:
		return engine.HedgeUpdate{Enabled: &on, Delay: str(p.Delay.String()), Budget: &budget}
	}
	q := p.Quantile
	return engine.HedgeUpdate{Enabled: &on, Delay: str("auto"), Quantile: &q, Budget: &budget}
}

// ParsePolicy accepts "direct", "off", "immediate", "auto" (the p95),
// "auto:Q", and a fixed delay as "120ms" or "fixed:120ms".
func ParsePolicy(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == KindDirect, s == KindOff, s == KindImmediate:
		return Policy{Name: s, Kind: s}, nil
	case s == "auto":
		return autoPolicy(0.95), nil
	case strings.HasPrefix(s, "auto:"):
		q, err := strconv.ParseFloat(strings.TrimPrefix(s, "auto:"), 64)
		if err != nil || q <= 0 || q >= 1 {
			return Policy{}, fmt.Errorf("bench: --policies: %q: the quantile must be in (0,1)", s)
		}
		return autoPolicy(q), nil
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "fixed:"))
	if err == nil && d == 0 {
		// PUT /v1/hedge takes "0s", so a user reaches for it here too.
		return Policy{}, fmt.Errorf("bench: --policies: %q: a fixed delay must be above 0; \"immediate\" is the row that hedges at once (with the budget lifted to 1)", s)
	}
	if err != nil || d <= 0 {
		return Policy{}, fmt.Errorf("bench: --policies: unknown policy %q (want direct, off, immediate, auto, auto:Q or a delay such as 120ms)", s)
	}
	return fixedPolicy(d), nil
}

func autoPolicy(q float64) Policy {
	return Policy{Name: fmt.Sprintf("auto p%g", 100*q), Kind: KindAuto, Quantile: q}
}

func fixedPolicy(d time.Duration) Policy {
	return Policy{Name: "fixed " + d.String(), Kind: KindFixed, Delay: d}
}

// ParsePolicies builds the rows: the --policies list, then a fixed row per
// delay of --delays and an auto row per quantile of --quantiles, each named
// once, in that order.
func ParsePolicies(list, delays, quantiles string) ([]Policy, error) {
	var out []Policy
	add := func(p Policy) {
		if !slices.ContainsFunc(out, func(o Policy) bool { return o.Name == p.Name }) {
			out = append(out, p)
		}
	}
	for _, s := range splitList(list) {
		p, err := ParsePolicy(s)
		if err != nil {
			return nil, err
		}
		add(p)
	}
	for _, s := range splitList(delays) {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("bench: --delays: %q is not a positive duration", s)
		}
		add(fixedPolicy(d))
	}
	for _, s := range splitList(quantiles) {
		q, err := strconv.ParseFloat(s, 64)
		if err != nil || q <= 0 || q >= 1 {
			return nil, fmt.Errorf("bench: --quantiles: %q is not in (0,1)", s)
		}
		add(autoPolicy(q))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no policies to compare")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
