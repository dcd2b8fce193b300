package engine

import (
	"math"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// Where hedges cut most slow primaries short, the product-limit curve
// past the cut rests on the few slow answers left: each carries the mass
// of the many primaries known only to take longer. The estimate stays
// unbiased but loses its precision: with the hedge budget (0.05) capping
// hedging at about the p95, 35 answers carried a tail of 300 primaries and
// the unhedged p99 came out anywhere from 830 to 960 ms for a true 900
// (one audit's read 843.8). Printed as it is, such a figure claims a
// precision the data do not have, and half the time it is optimistic.
// Greenwood's variance measures what is left:
//
//	Var Ŝ(t) = Ŝ(t)² · Σ over answers before t of d / (n·(n − d))
//
// and (1 − Ŝ)/Σ is the answers an uncensored window would need past t
// for the same precision (exactly the answers past t when none is
// censored).

// minThinTailAnswers is the effective answers past a figure below which,
// censoring dominating there, the figure is reported as the low end of its
// 95 % interval, a lower bound: at 20 the tail's mass is known to ±44 %.
const minThinTailAnswers = 20

// precisionAt is how well the primaries' curve is known at t: Ŝ(t), the
// Greenwood sum up to t, and Ĝ(t), the product-limit share of the window
// not cut short before t (as Horizon reckons it).
func (d Distribution) precisionAt(t time.Duration) (s, greenwood, g float64) {
	atRisk, s, g := d.Samples(), 1.0, 1.0
	for _, b := range d.Buckets {
		if b.High > t {
			break
		}
		if b.Exact > 0 && atRisk > 0 {
			n, dd := float64(atRisk), float64(b.Exact)
			if n > dd {
				greenwood += dd / (n * (n - dd))
			} else {
				greenwood = math.Inf(1) // the curve ends here
			}
			s *= 1 - dd/n
		}
		atRisk -= b.Exact
		if b.Censored > 0 && atRisk > 0 {
			g *= 1 - float64(b.Censored)/float64(atRisk)
		}
		atRisk -= b.Censored
	}
	return s, greenwood, g
}

// effectiveSamples is the size of an uncensored window that would know
// Ŝ(t) as well as this one does: the samples themselves without
// censoring, fewer the more of them were cut short before t.
func (d Distribution) effectiveSamples(t time.Duration) float64 {
	n := float64(d.Samples())
	s, gw, _ := d.precisionAt(t)
	if gw == 0 || s <= 0 || s >= 1 {
		return n
	}
	return min(n, (1-s)/(s*gw))
}

// thinAt says whether a figure at t rests on too few answers for its
// value: censoring dominates before t and fewer than minThinTailAnswers
// effective answers are left past it. rel is the relative standard error
// of Ŝ(t).
func (d Distribution) thinAt(t time.Duration) (rel float64, thin bool) {
	s, gw, g := d.precisionAt(t)
	if g >= window.CensoringDominates || gw == 0 {
		return 0, false
	}
	rel = math.Sqrt(gw)
	return rel, (1-s)/gw < minThinTailAnswers
}
