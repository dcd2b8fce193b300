package engine

import "time"

// ScoreParts is an endpoint's routing cost for a method, part by part, as
// the router computes it (see router.go):
//
//	Cost = (Latency + 10µs) × ErrorFactor × TailFactor × LoadFactor + LagCost
type ScoreParts struct {
	Latency time.Duration
	// LatencySource says which figure Latency is: "method" (this method's
	// p50, blended with its p90 once the window is full), "endpoint" (all
	// methods, probes included, while the method has too few samples) or
	// "pool" (the pool's best, while the endpoint has none).
	LatencySource string
	// FailureRate is failures ÷ attempts over the window, those that ended
	// while its breaker was open left out (openstretch.go); 0 below
	// MinAttempts attempts.
	FailureRate float64
	// Attempts is the endpoint's attempts over the window FailureRate is
	// taken over, those that reached a verdict (RateStats.Verdicts: not
	// the ones let go of because another won); below MinAttempts its
	// failures are not weighed (a run of them is the breaker's to judge),
	// whatever the error rate says.
	Attempts    int64
	MinAttempts int64
	ErrorFactor float64 // 1 + router.error_penalty × FailureRate
	// TailShare is the share of the same window's attempts far past its
	// median or the pool's best latency figure, whichever is higher,
	// answered or cut short (tail.go), less one, taken at its lower 95 %
	// bound so that one slow answer among few is not a tail.
	TailShare float64
	// TailFactor is 1 + router.tail_penalty × how far TailShare is above
	// the least of the endpoints weighed with it, at the upper end of its
	// interval (tail.go).
	TailFactor float64
	InFlight   int64 // requests in flight to the endpoint, an upstream batch one
	// Concurrency is how many requests at once it answered at its usual
	// pace lately, when it is the concurrency leader (concurrencyLeader),
	// else 1 (concurrency.go). LoadFactor is
	// 1 + InFlight ÷ Concurrency (1 + InFlight for an endpoint that has
	// proven none).
	Concurrency int64
	LoadFactor  float64
	Lag         int64
	LagCost     time.Duration // Lag × router.lag_penalty
	Cost        time.Duration
}

// Latency figure sources of ScoreParts.
const (
	scoreFromMethod   = "method"
	scoreFromEndpoint = "endpoint"
	scoreFromPool     = "pool"
)

// scoreParts is the router's cost of ep given its latency figure latMS (in
// milliseconds; negative when unmeasured, and best, the pool's best figure,
// stands in); lead: ep is the concurrency leader (concurrencyLeader).
func (e *Engine) scoreParts(ep *endpoint, fig routeFigure, best, leastTail float64, lead bool) ScoreParts {
	rc := e.cfg.Router
	latMS, source := fig.lat, fig.source
	if latMS < 0 {
		latMS, source = best, scoreFromPool
	}
	p := ScoreParts{Latency: msDuration(latMS), LatencySource: source, InFlight: ep.exchanges.Load(), Lag: e.lagOf(ep),
		MinAttempts: minRateAttempts, TailShare: fig.tail}
	t := ep.scoredRates()
	if p.Attempts = t.Verdicts(); p.Attempts >= minRateAttempts {
		p.FailureRate = float64(t.Failure) / float64(p.Attempts)
	}
	p.ErrorFactor = 1 + rc.ErrorPenalty*p.FailureRate
	p.TailFactor = 1 + rc.TailPenalty*max(p.TailShare-leastTail, 0)
	p.Concurrency = 1
	if lead {
		p.Concurrency = ep.concurrencyNow(e.now(), msDuration(latMS))
	}
	p.LoadFactor = 1 + float64(p.InFlight)/float64(p.Concurrency)
	p.LagCost = time.Duration(p.Lag) * rc.LagPenalty
	costMS := (latMS+0.01)*p.ErrorFactor*p.TailFactor*p.LoadFactor + float64(p.Lag)*float64(rc.LagPenalty)/float64(time.Millisecond)
	p.Cost = msDuration(costMS)
	return p
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// scores computes every endpoint's score for method ("" = all methods),
// with the pool's best latency taken over the endpoints that are routable
// now, as rank takes it over its candidates.
func (e *Engine) scores(method string, routable []bool) []ScoreParts {
	figs := make([]routeFigure, len(e.endpoints))
	best := -1.0
	for i, ep := range e.endpoints {
		figs[i] = unmeasured
		if fig, ok := ep.routeLatency(method); ok {
			figs[i] = fig
			if routable[i] && (best < 0 || fig.lat < best) {
				best = fig.lat
			}
		}
	}
	least := 1.0 // the least tail share of the measured routable endpoints, at its upper end
	for i := range figs {
		if high, ok := figs[i].takeTail(max(best, 0)); ok && routable[i] {
			least = min(least, high)
		}
	}
	best = max(best, 0)
	// The leader among the primaries, and apart among standbys and
	// canaries, as rank weighs them apart.
	leaderOf := func(aside bool) int {
		return concurrencyLeader(len(figs), func(i int) float64 {
			if !routable[i] || e.endpoints[i].keptAside() != aside {
				return -1
			}
			return figs[i].lat
		})
	}
	lead, leadAside := leaderOf(false), leaderOf(true)
	out := make([]ScoreParts, len(e.endpoints))
	for i, ep := range e.endpoints {
		out[i] = e.scoreParts(ep, figs[i], best, least, i == lead || i == leadAside)
	}
	return out
}
