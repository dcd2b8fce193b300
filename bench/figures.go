package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Figures are latency percentiles over a set of calls or operations, in
// milliseconds. Every member of the set counts: errors at the time they
// came back, timeouts at the timeout. A set none of whose members got an
// answer (connections refused, timeouts) has no latencies: Unanswered,
// and the figures zero, never its failures' times.
type Figures struct {
	N          int     `json:"n"`
	Unanswered bool    `json:"unanswered,omitempty"`
	P50        float64 `json:"p50_ms"`
	P95        float64 `json:"p95_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p999_ms"`
	Max        float64 `json:"max_ms"`
	// Thin names the percentiles that rest on fewer than minBeyond values
	// at or above them: read them as rough.
	Thin []string `json:"thin,omitempty"`
}

// minBeyond is how many values at or above a percentile make it more than
// a rough figure (p99.9 needs 10 000 values).
const minBeyond = 10

var percentiles = []struct {
	name string
	q    float64
}{{"p50", 0.50}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}}

// figuresOf reduces latencies to Figures: each percentile is the
// nearest-rank value, the ⌈q·n⌉-th smallest, exact to the microsecond. A
// histogram's rounded rank (q·n + ½) would read the 158th of 160 values
// for p99, hiding the two slowest (1.25 % of calls); the rank is the one
// beyond counts from.
func figuresOf(lat []time.Duration) Figures {
	f := Figures{N: len(lat)}
	if f.N == 0 {
		return f
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	ms := func(d time.Duration) float64 { return float64(max(d, 0).Microseconds()) / 1000 }
	vals := []*float64{&f.P50, &f.P95, &f.P99, &f.P999}
	for i, p := range percentiles {
		*vals[i] = ms(sorted[f.N-beyond(f.N, p.q)])
		if beyond(f.N, p.q) < minBeyond {
			f.Thin = append(f.Thin, p.name)
		}
	}
	f.Max = ms(sorted[f.N-1])
	return f
}

// beyond is how many of n values sit at or above the q-quantile.
func beyond(n int, q float64) int {
	return n - int(math.Ceil(q*float64(n)-1e-9)) + 1
}

// completion is when an operation of calls completes with quorum q: the
// q-th fastest successful answer. When more than len(calls)−q calls fail
// it cannot complete: ok is false and the time is when that became
// certain, the failure that made it so.
func completion(calls []Sample, q int) (time.Duration, bool) {
	var okLat, failLat []time.Duration
	for _, c := range calls {
		if c.OK() {
			okLat = append(okLat, c.Latency)
		} else {
			failLat = append(failLat, c.Latency)
		}
	}
	q = min(max(q, 1), len(calls))
	if len(okLat) >= q {
		slices.Sort(okLat)
		return okLat[q-1], true
	}
	slices.Sort(failLat)
	return failLat[len(calls)-q], false
}

// amplification is upstream attempts per client request.
func amplification(upstream int64, requests int) float64 {
	if requests == 0 {
		return 0
	}
	return float64(upstream) / float64(requests)
}

// loadCheck is the seed's (1+h)·ρ: the upstream requests per second that
// the pool is offered (duplicates included, each a full unit of work) over
// what its endpoints serve before they queue. At 1 or more the queue has no
// steady state and every gain of hedging is gone; 0 capacity: no check.
func loadCheck(upstreamPerSec float64, endpoints int, capacity float64) (load float64, over bool) {
	if capacity <= 0 || endpoints <= 0 {
		return 0, false
	}
	load = upstreamPerSec / (float64(endpoints) * capacity)
	return load, load >= 1
}

// Wasted is the work thrown away upstream: requests cancelled because
// another attempt won (or, seen from the upstreams, cut at their attempt
// deadline), and the upstream time they had used. Requests are JSON-RPC
// calls, each call of a batch one, as Row.Upstream counts them.
type Wasted struct {
	Cancelled int64   `json:"cancelled"`
	Seconds   float64 `json:"upstream_seconds"`
	// Source is "upstreams" (the built-in sims' counters: every request
	// whose client went away) or "engine" (the instance's cancelled losers).
	Source string `json:"source"`
}

// wastedBetween is the waste of the methods over a span, from the engine's
// cumulative accounting at its start and end.
func wastedBetween(before, after map[string]engine.MethodStatus, methods []string) Wasted {
	w := Wasted{Source: "engine"}
	for _, m := range methods {
		w.Cancelled += after[m].Losers - before[m].Losers
		w.Seconds += (after[m].LoserTime - before[m].LoserTime).Seconds()
	}
	return w
}

// refusedBetween is, by reason, how many calls of the methods had a due
// hedge not sent over a span (the engine's hedges_refused); nil when none.
func refusedBetween(before, after map[string]engine.MethodStatus, methods []string) map[string]int64 {
	var out map[string]int64
	for _, m := range methods {
		for why, n := range after[m].HedgesRefused {
			if d := n - before[m].HedgesRefused[why]; d > 0 {
				if out == nil {
					out = map[string]int64{}
				}
				out[why] += d
			}
		}
	}
	return out
}

// heldBackWhy are the refusals that mean a hedged row did not run its
// policy as written: a guard held its hedges for the state of the machine
// or of the pool. The budget and hedge.max_outstanding are the row's own
// limits, and the model column already weighs the budget.
var heldBackWhy = []struct{ reason, means string }{
	{"late", "the hedge timer fired late, or rpcdash's goroutines waited for a CPU: rpcdash itself stalled or busy on a busy machine"},
	{"queue", "the queue guard: most endpoints queued"},
	{"paused", "the saturation guard: hedge.max_inflight or hedge.pause_error_rate"},
}

// heldBackWarning says how many calls had their hedge held back by a
// guard, by reason; "" when none was.
func heldBackWarning(refused map[string]int64, calls int) string {
	var parts []string
	for _, h := range heldBackWhy {
		if n := refused[h.reason]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%s)", h.reason, n, h.means))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("hedges held back: of %d calls, a due hedge was not sent then for %s; the hedged share is below what the policy alone sends",
		calls, strings.Join(parts, ", "))
}

// lateSends are the sends that left more than lateSend after their time.
const lateSend = 5 * time.Millisecond

// generatorWarning says when the generator itself fell behind: latencies
// count from the scheduled send, so they include its lateness.
func generatorWarning(lags []time.Duration) string {
	late, worst := 0, time.Duration(0)
	for _, l := range lags {
		if l > lateSend {
			late++
		}
		worst = max(worst, l)
	}
	if len(lags) == 0 || (late*100 <= len(lags) && worst < 50*time.Millisecond) {
		return ""
	}
	return fmt.Sprintf("the generator fell behind its schedule: %d of %d sends (%.1f%%) left more than %s late, the worst %s; latencies count from the scheduled time and include it (a busy machine)",
		late, len(lags), 100*float64(late)/float64(len(lags)), lateSend, worst.Round(time.Millisecond))
}
