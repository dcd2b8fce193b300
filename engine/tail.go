package engine

import (
	"math"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// An endpoint's tail in the routing cost. Its latency figure (p50 blended
// with p90) does not see a tail of a few per cent: an endpoint whose
// median is as good as the others' but 5 % of whose answers take ten times
// as long kept a fair share of primaries (three sims, two steady and one
// heavy-tail, 100 reads/s: it took 20 % of them and clients' p99 was
// 104 ms, against 67 ms talking to a steady one directly). Each of its slow
// primaries costs the client a hedge delay and a second answer, or its
// whole tail with hedging off, so the cost is raised by the share of its
// attempts that left its usual pace far behind:
//
//	tail factor = 1 + router.tail_penalty × (tail share − the least tail share of the endpoints weighed with it)
//
// where the tail share is taken at the lower end of its interval and the
// least at the upper end of theirs: only a tail surely longer than the
// best endpoint's counts. A tail every endpoint has (slow together, a
// method that takes long at times anywhere) is no reason to prefer one,
// and noise between equals must not become a preference: it skewed the
// reads of three equal endpoints slow together (correlated incidents), and
// with them the hedging forecast's targets.

// An answer past tailAnswered × the endpoint's median, or an attempt cut
// short past tailLost × it because another answered first, is in its tail
// (window.TailShare); the median is taken as at least the pool's best
// latency figure: a quick endpoint with a wide spread whose slow answers
// are as quick as the others' usual ones (10 ms median, σ 0.8, p99 64 ms,
// beside one of 40 ms and p99 71 ms) has no tail that matters, and was
// left for the slower one, a client's median 11 → 42 ms. A lognormal body of σ 0.3 puts next to none of its
// answers past four times its median, one of σ 0.6 1 %.
// Neither is a tail within tailSlack of the median: a sub-millisecond
// endpoint's scheduling jitter is not.
const (
	tailAnswered = 4
	tailLost     = 1.5
	tailSlack    = 5 * time.Millisecond
)

// tailZ is the one-sided 95 % normal quantile of tailBound.
const tailZ = 1.6449

// takeTail sets f's tail share against the pool's best latency figure
// (ms) and returns the upper end of its interval; ok is false when f is
// unmeasured (no window, no share).
func (f *routeFigure) takeTail(best float64) (high float64, ok bool) {
	if f.window == nil {
		return 0, false
	}
	f.tail, high = tailOf(f.window, msDuration(best))
	return high, true
}

// tailOf is w's tail share against the pool's best latency figure: less
// one slow attempt, at the lower end of its interval (low), and at the
// upper end (high).
func tailOf(w *window.Latency, best time.Duration) (low, high float64) {
	share, n := w.TailShare(best, tailAnswered, tailLost, tailSlack)
	if n <= 0 {
		return 0, 1
	}
	_, high = tailInterval(share, n)
	if slow := math.Round(share*float64(n)) - 1; slow > 0 { // one slow attempt is not a tail
		low, _ = tailInterval(slow/float64(n), n)
	}
	return low, high
}

// tailInterval is the Wilson score interval of a share seen in n
// observations: two slow answers among twenty are not a 10 % tail (its
// lower end 1.1 %), a hundred among two thousand are about 5 % (4.2 %).
func tailInterval(share float64, n int64) (low, high float64) {
	fn := float64(n)
	z2 := tailZ * tailZ
	centre := share + z2/(2*fn)
	spread := tailZ * math.Sqrt(share*(1-share)/fn+z2/(4*fn*fn))
	return max((centre-spread)/(1+z2/fn), 0), min((centre+spread)/(1+z2/fn), 1)
}

// leftBehind says that a, outrun and cut short after ran without an
// answer, had left its endpoint's usual pace behind as far as a tail
// counts it (lost to an attempt that was not given more time). Its
// endpoint is then suspect, as after a failure: exploring it again is a
// hedge beside the best candidate, never a read of its own that a client
// would wait on while it is slow or hung. (Its tail share keeps it from
// reads otherwise, so the losses that would trip its breaker as a hang
// come one exploration at a time.)
func leftBehind(a *attempt, ran time.Duration) bool {
	if w := a.outranBy.Load(); w > 0 && ran <= time.Duration(w) {
		return false
	}
	_, _, w, _, ok := a.ep.usualPace(a.stats)
	if !ok {
		return false
	}
	return ran > pastTail(w.Quantile(0.5), tailLost)
}

// pastTail is where a tail starts for an endpoint of that median: factor ×
// it, at least tailSlack past it.
func pastTail(median time.Duration, factor float64) time.Duration {
	return max(time.Duration(float64(median)*factor), median+tailSlack)
}
