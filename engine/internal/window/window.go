package window

import (
	"math/bits"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Rolling windows keep the last span of observations as a ring of
// sub-windows; the oldest is cleared and reused when time moves past it,
// so the window reaches back between span−span/buckets and span.

// DefaultBuckets is how many sub-windows a rolling window ages out by,
// unless told otherwise.
const DefaultBuckets = 5

// Latencies are recorded in microseconds from 1µs to 10min (longer ones are
// clamped, never dropped) at 2 significant figures: a bucket is at most
// 1/128 of its value wide.
const (
	latencyMaxMicros = int64(10 * time.Minute / time.Microsecond)
	latencySigFigs   = 2
	latencySubBucket = 256 // sub-buckets per power of two at latencySigFigs
)

// ring maps time onto sub-windows: sub-window k covers
// [epoch+k·width, epoch+(k+1)·width) and lives in slot k mod n.
type ring struct {
	epoch time.Time
	width time.Duration
	n     int64
	head  int64 // the sub-window being written
}

func newRing(span time.Duration, buckets int, now time.Time) ring {
	if span <= 0 {
		panic("window: rolling window span must be positive")
	}
	if buckets < 1 {
		buckets = DefaultBuckets
	}
	width := span / time.Duration(buckets)
	if width <= 0 {
		width = 1
	}
	return ring{epoch: now, width: width, n: int64(buckets)}
}

// advance moves head to the sub-window holding t and returns the range
// [from, to) of sub-windows that have just come into use and must be
// cleared first. A clock that steps back keeps writing the current one.
func (r *ring) advance(t time.Time) (from, to int64) {
	k := int64(t.Sub(r.epoch) / r.width)
	if k <= r.head {
		return 0, 0
	}
	from = max(r.head+1, k-r.n+1)
	r.head = k
	return from, k + 1
}

func (r *ring) slot(k int64) int { return int(k % r.n) }

// covered is how much time the live sub-windows span at t.
func (r *ring) covered(t time.Time) time.Duration {
	since := max(t.Sub(r.epoch), 0)
	inHead := max(since-time.Duration(r.head)*r.width, 0)
	return min(since, time.Duration(r.n-1)*r.width+inHead)
}

// Latency is a rolling latency histogram. Exact observations and
// censored ones (known only to exceed a value) are kept apart.
//
// Each sub-window holds sparse (packed) HdrHistograms, and a running
// aggregate of the live sub-windows takes every record too, so queries read
// one histogram and Quantile is never stale (QuantileCensored may be, by up
// to censoredRefresh). When a non-empty sub-window expires the
// aggregate is rebuilt from the survivors, once per sub-window width, at a
// cost proportional to the buckets in use. Histograms are allocated on first
// use and reused after Reset, so a steady stream records without allocating.
type Latency struct {
	mu    sync.Mutex
	now   func() time.Time
	ring  ring
	slots []latencySlot
	exact *hdr.PackedHistogram // aggregate of the live sub-windows
	cens  *hdr.PackedHistogram
	cbuf  []bucketCount // scratch for QuantileCensored
	km    kmCache
	tail  tailCache

	changes   uint64 // records so far
	rotations uint64 // rotations that dropped observations
}

// censoredRefresh bounds how stale QuantileCensored may be: its estimate is
// reused for the same q until an observation has aged out or it is this old
// and observations have arrived since. It walks every bucket in use, a few
// microseconds, too much for every request of a busy endpoint.
const censoredRefresh = 5 * time.Millisecond

type kmCache struct {
	valid, bounded     bool
	q                  float64
	v                  time.Duration
	at                 time.Time
	changes, rotations uint64
}

type latencySlot struct{ exact, cens *hdr.PackedHistogram }

type bucketCount struct{ value, count int64 }

// NewLatency keeps latencies for span in buckets sub-windows
// (buckets < 1 means 5). now nil means time.Now.
func NewLatency(span time.Duration, buckets int, now func() time.Time) *Latency {
	if now == nil {
		now = time.Now
	}
	return NewLatencyFrom(span, buckets, now, now())
}

// NewLatencyFrom is NewLatency with its sub-windows counted from epoch
// rather than from now: windows made at different times from one epoch
// age out together, so each covers the same span as the others.
func NewLatencyFrom(span time.Duration, buckets int, now func() time.Time, epoch time.Time) *Latency {
	if now == nil {
		now = time.Now
	}
	r := newRing(span, buckets, epoch)
	return &Latency{now: now, ring: r, slots: make([]latencySlot, r.n)}
}

func newLatencyHistogram() *hdr.PackedHistogram {
	return hdr.NewPacked(1, latencyMaxMicros, latencySigFigs)
}

func toMicros(d time.Duration) int64 {
	return min(max(int64(d/time.Microsecond), 1), latencyMaxMicros)
}

func fromMicros(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// bucketTop is the highest value sharing v's histogram bucket, which is
// what HdrHistogram reports for a quantile falling in that bucket.
func bucketTop(v int64) int64 {
	shift := bits.Len64(uint64(v)|(latencySubBucket-1)) - bits.Len64(latencySubBucket-1)
	return (v>>shift)<<shift + 1<<shift - 1
}

// Record adds one exact observation.
func (w *Latency) Record(d time.Duration) { w.record(d, 1, false) }

// RecordN adds n exact observations of d under one lock: the calls of a
// batch, answered together.
func (w *Latency) RecordN(d time.Duration, n int64) { w.record(d, n, false) }

// RecordCensored adds an observation known only to exceed d, such as a
// hedged primary cancelled after d because the hedge answered first.
// Quantile ignores it; QuantileCensored uses it.
func (w *Latency) RecordCensored(d time.Duration) { w.record(d, 1, true) }

func (w *Latency) record(d time.Duration, n int64, censored bool) {
	v, t := toMicros(d), w.now()
	w.mu.Lock()
	w.rotateLocked(t)
	s := &w.slots[w.ring.slot(w.ring.head)]
	slot, agg := &s.exact, &w.exact
	if censored {
		slot, agg = &s.cens, &w.cens
	}
	if *slot == nil {
		*slot = newLatencyHistogram()
	}
	if *agg == nil {
		*agg = newLatencyHistogram()
	}
	// v is clamped into range, so recording cannot fail.
	_ = (*slot).RecordValues(v, n)
	_ = (*agg).RecordValues(v, n)
	w.changes++
	w.mu.Unlock()
}

func (w *Latency) rotateLocked(t time.Time) {
	w.dropLocked(w.ring.advance(t))
}

// dropLocked empties sub-windows [from, to) and rebuilds the aggregates
// from the survivors; it returns how many exact observations went.
func (w *Latency) dropLocked(from, to int64) (dropped int64) {
	var dropExact, dropCens bool
	for k := from; k < to; k++ {
		s := &w.slots[w.ring.slot(k)]
		dropped += total(s.exact)
		dropExact = emptied(s.exact) || dropExact
		dropCens = emptied(s.cens) || dropCens
	}
	if dropExact || dropCens {
		w.rotations++ // the cached estimates are stale
	}
	if dropExact {
		w.rebuild(w.exact, func(s *latencySlot) *hdr.PackedHistogram { return s.exact })
	}
	if dropCens {
		w.rebuild(w.cens, func(s *latencySlot) *hdr.PackedHistogram { return s.cens })
	}
	return dropped
}

// Forget drops the observations recorded since t, exact and censored: the
// sub-windows from the one holding t to the newest, whole (a sub-window is
// server.stats_window / DefaultBuckets wide, so some from before t may go
// too). It returns how many exact observations went, and the start of the
// first sub-window dropped.
func (w *Latency) Forget(t time.Time) (dropped int64, since time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rotateLocked(w.now())
	from := max(int64(t.Sub(w.ring.epoch)/w.ring.width), w.ring.head-w.ring.n+1, 0)
	return w.dropLocked(from, w.ring.head+1), w.ring.epoch.Add(time.Duration(from) * w.ring.width)
}

// emptied empties h and says whether it held anything.
func emptied(h *hdr.PackedHistogram) bool {
	if h == nil || h.TotalCount() == 0 {
		return false
	}
	h.Reset()
	return true
}

func (w *Latency) rebuild(agg *hdr.PackedHistogram, part func(*latencySlot) *hdr.PackedHistogram) {
	agg.Reset()
	for i := range w.slots {
		if h := part(&w.slots[i]); h != nil && h.TotalCount() > 0 {
			agg.Merge(h)
		}
	}
}

// Quantile is the q-quantile (0..1) of the exact observations, 0 if there
// are none.
func (w *Latency) Quantile(q float64) time.Duration {
	w.lockCurrent()
	defer w.mu.Unlock()
	return fromMicros(quantileOf(w.exact, q))
}

// QuantilePair is Quantile for two quantiles and the exact count, under one
// lock (the router asks for these on every request).
func (w *Latency) QuantilePair(q1, q2 float64) (n int64, v1, v2 time.Duration) {
	w.lockCurrent()
	defer w.mu.Unlock()
	return total(w.exact), fromMicros(quantileOf(w.exact, q1)), fromMicros(quantileOf(w.exact, q2))
}

// lockCurrent locks the window and ages out what has left it; the caller
// unlocks.
func (w *Latency) lockCurrent() {
	t := w.now()
	w.mu.Lock()
	w.rotateLocked(t)
}

func quantileOf(h *hdr.PackedHistogram, q float64) int64 {
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return h.ValueAtPercentile(q * 100)
}

// QuantileCensored is the q-quantile of the latency distribution estimated
// from exact and censored observations together, with the Kaplan–Meier
// product-limit estimator over the histogram's buckets:
//
//	S(b) = Π over buckets i ≤ b of (1 − d_i / n_i)
//
// where d_i is the number of exact observations in bucket i and n_i the
// number still at risk there (exact or censored, in bucket i or above). A
// censored observation counts as at risk in its own bucket, as ties between
// a censoring time and an event time are taken in the standard convention.
// The answer is the top of the first bucket where 1 − S reaches q, which for
// no censored observations is what Quantile returns. Ignoring censored
// observations (Quantile) biases the tail low, because exactly the slow ones
// are the ones cut short.
//
// When censoring leaves the estimate short of q (every observation past some
// point was censored, so the data say only "later than that"), the answer is
// the largest observation, exact or censored: a lower bound. 0 if empty.
func (w *Latency) QuantileCensored(q float64) time.Duration {
	w.lockCurrent()
	defer w.mu.Unlock()
	return w.quantileCensoredLocked(q)
}

// AnswerQuantile is QuantileCensored capped at the slowest exact
// observation, with the number of exact observations, under one lock:
// censored observations keep the quantile from being biased low but cannot
// push it past what the endpoint ever answered in.
func (w *Latency) AnswerQuantile(q float64) (time.Duration, int64) {
	w.lockCurrent()
	defer w.mu.Unlock()
	n := total(w.exact)
	if n == 0 {
		return 0, 0
	}
	return min(w.quantileCensoredLocked(q), fromMicros(w.exact.Max())), n
}

// CensoringDominates is the share Ĝ(t) of a window not yet cut short
// before t (the product-limit estimate of the censoring's own survival)
// below which censoring dominates the survival curve past t: more than half
// of the mass it puts there is inferred from observations known only to
// take longer, not from answers.
const CensoringDominates = 0.5

// MinTailAnswers is how many answers at or past a point of the survival
// curve must carry it where censoring dominates: fewer answers inheriting
// the mass of many primaries cut short are no estimate. (Under ordinary
// hedging the far tail is mostly cut short too, but a window holds dozens
// of answers there.)
const MinTailAnswers = 5

// DelayQuantile is QuantileCensored as the hedge delay uses it: never past
// the last answer seen before censoring dominates (CensoringDominates) with
// fewer than MinTailAnswers answers left to carry the curve, nor
// past the slowest answer when censoring ends the estimate short of q; 0
// without any answer. A few answers above many primaries cut short would
// otherwise carry the whole tail and pull the delay out to them.
func (w *Latency) DelayQuantile(q float64) time.Duration {
	w.lockCurrent()
	defer w.mu.Unlock()
	nE, nC := total(w.exact), total(w.cens)
	switch {
	case nE == 0:
		return 0
	case nC == 0:
		return fromMicros(quantileOf(w.exact, q))
	}
	return w.cachedLocked(q, true)
}

func (w *Latency) quantileCensoredLocked(q float64) time.Duration {
	nE, nC := total(w.exact), total(w.cens)
	switch {
	case nC == 0:
		return fromMicros(quantileOf(w.exact, q))
	case nE == 0:
		return fromMicros(w.cens.Max())
	}
	return w.cachedLocked(q, false)
}

func (w *Latency) cachedLocked(q float64, bounded bool) time.Duration {
	t := w.now()
	if c := w.km; c.valid && c.q == q && c.bounded == bounded && c.rotations == w.rotations && (c.changes == w.changes || t.Sub(c.at) < censoredRefresh) {
		return c.v
	}
	stop := kmCurveEnd
	if bounded {
		stop = kmLastAnswer
	}
	qs, vals, open := [1]float64{q}, [1]time.Duration{}, [1]bool{}
	w.productLimitLocked(w.exact, qs[:], vals[:], open[:], stop)
	v := vals[0]
	w.km = kmCache{valid: true, q: q, bounded: bounded, v: v, at: t, changes: w.changes, rotations: w.rotations}
	return v
}

// Counts are the numbers of exact and censored observations in the window.
func (w *Latency) Counts() (exact, censored int64) {
	w.lockCurrent()
	defer w.mu.Unlock()
	return total(w.exact), total(w.cens)
}

// Count is the number of exact observations in the window.
func (w *Latency) Count() int64 {
	n, _ := w.Counts()
	return n
}

// CensoredCount is the number of censored observations in the window.
func (w *Latency) CensoredCount() int64 {
	_, c := w.Counts()
	return c
}

func total(h *hdr.PackedHistogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

// Recent returns the median of each sub-window, oldest first, the current
// (partial) one last; 0 for a sub-window without observations.
func (w *Latency) Recent() []time.Duration {
	w.lockCurrent()
	defer w.mu.Unlock()
	out := make([]time.Duration, w.ring.n)
	for i := range out {
		k := w.ring.head - w.ring.n + 1 + int64(i)
		if k < 0 {
			continue
		}
		out[i] = fromMicros(quantileOf(w.slots[w.ring.slot(k)].exact, 0.5))
	}
	return out
}

// Bucket is one populated histogram bucket: every value in [Low, High]
// falls in it; Exact and Censored count its observations of each kind.
type Bucket struct {
	Low, High time.Duration
	Exact     int64
	Censored  int64
}

// Buckets copies the window's populated buckets, exact and censored
// observations merged, in ascending order, under the window's lock.
func (w *Latency) Buckets() []Bucket {
	w.lockCurrent()
	defer w.mu.Unlock()
	var exact, cens []bucketCount
	if n := total(w.exact); n > 0 {
		exact = make([]bucketCount, 0, w.exact.Populated())
		w.exact.ForEachBucket(func(v, c int64) bool { exact = append(exact, bucketCount{v, c}); return true })
	}
	if n := total(w.cens); n > 0 {
		cens = make([]bucketCount, 0, w.cens.Populated())
		w.cens.ForEachBucket(func(v, c int64) bool { cens = append(cens, bucketCount{v, c}); return true })
	}
	out := make([]Bucket, 0, len(exact)+len(cens))
	i, j := 0, 0
	for i < len(exact) || j < len(cens) {
		var v, e, c int64
		switch {
		case j == len(cens) || i < len(exact) && exact[i].value < cens[j].value:
			v, e = exact[i].value, exact[i].count
			i++
		case i == len(exact) || cens[j].value < exact[i].value:
			v, c = cens[j].value, cens[j].count
			j++
		default: // the same bucket in both
			v, e, c = exact[i].value, exact[i].count, cens[j].count
			i++
			j++
		}
		out = append(out, Bucket{Low: fromMicros(v), High: fromMicros(bucketTop(v)), Exact: e, Censored: c})
	}
	return out
}

// Histogram is a latency histogram that never ages out (a hedging trial's,
// since the change), in the windows' buckets. It is not safe for
// concurrent use: the caller locks.
type Histogram struct{ h *hdr.PackedHistogram }

// NewHistogram is an empty Histogram.
func NewHistogram() *Histogram { return &Histogram{h: newLatencyHistogram()} }

// Record adds one observation (clamped into the histogram's range).
func (h *Histogram) Record(d time.Duration) { _ = h.h.RecordValue(toMicros(d)) }

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Quantile is the q-quantile (0..1); 0 if empty.
func (h *Histogram) Quantile(q float64) time.Duration { return fromMicros(quantileOf(h.h, q)) }

// TailShare is the share of the window's observations far past the median
// of its answers, or past base when that is higher (what the endpoint's
// alternatives usually take: a quick endpoint's spread is no tail while
// it stays within what the others take anyway): answers slower than
// answered × that, and attempts cut short after lost × it because another
// attempt answered first; neither closer than slack to the median (a
// sub-millisecond endpoint's scheduling jitter is no tail). The second are the slow answers hedging hides (a hedged primary's
// answer never arrives, so only its censoring time says it had fallen
// behind); a race lost that late, to an attempt that started after it, is
// itself the mark of a slow one, and an attempt raced from its start loses
// near its usual pace. n is how many observations the share rests on,
// exact and censored. A median-relative threshold says nothing of how slow
// the endpoint usually is (the cost's latency says that), only how often
// it leaves its usual pace far behind. The product-limit estimate would
// not do here: the censoring is not independent of the latency (exactly
// the slow attempts are cut short), and it would hand their mass to the
// few quick answers left at risk past them. Cached as QuantileCensored is,
// for censoredRefresh.
func (w *Latency) TailShare(base time.Duration, answered, lost float64, slack time.Duration) (float64, int64) {
	w.lockCurrent()
	defer w.mu.Unlock()
	nE, nC := total(w.exact), total(w.cens)
	if nE == 0 {
		return 0, nE + nC
	}
	t := w.now()
	b := bucketTop(toMicros(base)) // a base that moves within its bucket keeps the cache
	if c := w.tail; c.valid && c.base == b && c.answered == answered && c.lost == lost && c.slack == slack && c.rotations == w.rotations && (c.changes == w.changes || t.Sub(c.at) < censoredRefresh) {
		return c.share, c.n
	}
	median, floor := quantileOf(w.exact, 0.5), toMicros(slack)
	usual := max(median, b)
	past := countPast(w.exact, max(int64(float64(usual)*answered), median+floor)) +
		countPast(w.cens, max(int64(float64(usual)*lost), median+floor))
	share := float64(past) / float64(nE+nC)
	w.tail = tailCache{valid: true, base: b, answered: answered, lost: lost, slack: slack, share: share, n: nE + nC, at: t, changes: w.changes, rotations: w.rotations}
	return share, nE + nC
}

type tailCache struct {
	valid                 bool
	base                  int64 // micros, a bucket's top
	answered, lost, share float64
	slack                 time.Duration
	n                     int64
	at                    time.Time
	changes, rotations    uint64
}

// countPast is how many of h's observations lie in buckets wholly past x.
func countPast(h *hdr.PackedHistogram, x int64) int64 {
	if h == nil {
		return 0
	}
	var below int64
	h.ForEachBucket(func(v, c int64) bool {
		if v > x {
			return false
		}
		below += c
		return true
	})
	return h.TotalCount() - below
}
