package window

import (
	"sync"
	"time"
)

// Kind is one tally of a Rates window. Kinds are independent: whether a
// timeout also counts as a failure is the caller's choice.
type Kind uint8

const (
	Attempts Kind = iota
	Success
	Failure
	Timeout
	RateLimited
	Cancelled
	Hedge    // hedge attempts (per endpoint and method: where hedges go)
	HedgeWon // hedges that answered first
	Upstream // attempts sent upstream, where Attempts counts client requests
	numKinds
)

var kindNames = [numKinds]string{"attempts", "success", "failure", "timeout", "http429", "cancelled", "hedge", "hedge_won", "upstream"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Totals are a Rates window's sums. Covered is the time they span: less
// than the window's span while the window is younger than that.
type Totals struct {
	Attempts    int64
	Success     int64
	Failure     int64
	Timeout     int64
	RateLimited int64
	Cancelled   int64
	Hedges      int64
	HedgesWon   int64
	Upstream    int64
	Covered     time.Duration
}

// Verdicts is the attempts that ended in an outcome of the endpoint's
// own: all but the Cancelled, let go of because another attempt won or
// the request ended. Error and 429 shares are of these.
func (t Totals) Verdicts() int64 { return t.Attempts - t.Cancelled }

// Get returns the total of one kind.
func (t Totals) Get(k Kind) int64 {
	switch k {
	case Attempts:
		return t.Attempts
	case Success:
		return t.Success
	case Failure:
		return t.Failure
	case Timeout:
		return t.Timeout
	case RateLimited:
		return t.RateLimited
	case Cancelled:
		return t.Cancelled
	case Hedge:
		return t.Hedges
	case HedgeWon:
		return t.HedgesWon
	case Upstream:
		return t.Upstream
	}
	return 0
}

// PerSecond is the rate of one kind over the covered time.
func (t Totals) PerSecond(k Kind) float64 {
	if t.Covered <= 0 {
		return 0
	}
	return float64(t.Get(k)) / t.Covered.Seconds()
}

// Rates is a set of rolling counters.
type Rates struct {
	mu    sync.Mutex
	now   func() time.Time
	ring  ring
	slots [][numKinds]int64
}

// NewRates keeps counts for span in buckets sub-windows (buckets < 1
// means 5). now nil means time.Now.
func NewRates(span time.Duration, buckets int, now func() time.Time) *Rates {
	if now == nil {
		now = time.Now
	}
	return NewRatesFrom(span, buckets, now, now())
}

// NewRatesFrom is NewRates with its sub-windows counted from epoch, as
// NewLatencyFrom.
func NewRatesFrom(span time.Duration, buckets int, now func() time.Time, epoch time.Time) *Rates {
	if now == nil {
		now = time.Now
	}
	r := newRing(span, buckets, epoch)
	return &Rates{now: now, ring: r, slots: make([][numKinds]int64, r.n)}
}

// Add counts n events of kind; an unknown kind is ignored.
func (r *Rates) Add(kind Kind, n int64) {
	if kind >= numKinds {
		return
	}
	t := r.now()
	r.mu.Lock()
	r.rotateLocked(t)
	r.slots[r.ring.slot(r.ring.head)][kind] += n
	r.mu.Unlock()
}

// Count counts one event of each kind given, under one lock (an attempt
// and its outcome, say); unknown kinds are ignored.
func (r *Rates) Count(kinds ...Kind) { r.CountN(1, kinds...) }

// CountN counts n events of each kind given, under one lock: the calls of
// an upstream batch, answered together.
func (r *Rates) CountN(n int64, kinds ...Kind) {
	t := r.now()
	r.mu.Lock()
	r.rotateLocked(t)
	slot := &r.slots[r.ring.slot(r.ring.head)]
	for _, k := range kinds {
		if k < numKinds {
			slot[k] += n
		}
	}
	r.mu.Unlock()
}

func (r *Rates) rotateLocked(t time.Time) {
	from, to := r.ring.advance(t)
	for k := from; k < to; k++ {
		r.slots[r.ring.slot(k)] = [numKinds]int64{}
	}
}

// Totals sums each kind over the window.
func (r *Rates) Totals() Totals { return r.TotalsOutside() }

func totalsOf(sum [numKinds]int64, covered time.Duration) Totals {
	return Totals{
		Attempts: sum[Attempts], Success: sum[Success], Failure: sum[Failure],
		Timeout: sum[Timeout], RateLimited: sum[RateLimited], Cancelled: sum[Cancelled],
		Hedges: sum[Hedge], HedgesWon: sum[HedgeWon], Upstream: sum[Upstream], Covered: covered,
	}
}

// Mark is what a Rates held at a moment, sub-window by sub-window, so that
// TotalsOutside can leave out what was counted between two of them.
type Mark struct {
	head  int64
	slots [][numKinds]int64 // slots[i]: sub-window head−i
}

// Mark takes the counts held now.
func (r *Rates) Mark() *Mark {
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked(t)
	m := &Mark{head: r.ring.head, slots: make([][numKinds]int64, r.ring.n)}
	for i := range r.ring.n {
		if k := r.ring.head - i; k >= 0 {
			m.slots[i] = r.slots[r.ring.slot(k)]
		}
	}
	return m
}

// Stretch is the time between two marks of a Rates, From taken first.
type Stretch struct{ From, To *Mark }

// Within says whether any of what was counted in the stretch may still be
// in the window.
func (r *Rates) Within(s Stretch) bool {
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked(t)
	return s.To != nil && s.To.head >= r.ring.head-r.ring.n+1
}

// TotalsOutside is Totals less what was counted within the stretches
// (each between its marks; one without both marks leaves out nothing), for
// as long as it is in the window: the counts outside them.
func (r *Rates) TotalsOutside(stretches ...Stretch) Totals {
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked(t)
	var sum [numKinds]int64
	for i := range r.slots {
		for k, v := range r.slots[i] {
			sum[k] += v
		}
	}
	oldest := r.ring.head - r.ring.n + 1
	for _, st := range stretches {
		if st.From == nil || st.To == nil {
			continue
		}
		for i, late := range st.To.slots {
			k := st.To.head - int64(i)
			if k < 0 || k < oldest {
				continue
			}
			var early [numKinds]int64
			if j := st.From.head - k; j >= 0 && j < int64(len(st.From.slots)) {
				early = st.From.slots[j]
			}
			for kind := range late {
				sum[kind] -= late[kind] - early[kind]
			}
		}
	}
	return totalsOf(sum, r.ring.covered(t))
}

// PerSecond is the rate of kind over the last widths sub-window widths
// (at most the span less one sub-window; 0 or less: that much), or the
// time since the window began while it is younger. The oldest sub-window
// the stretch reaches into counts for the part of it still in the
// stretch, as if its events were spread evenly over it. Totals' rate,
// over the live sub-windows whatever they span, rose when a quiet
// sub-window aged out (covered time falling from span to span less a
// sub-window): with traffic stopped, a method's req/s went up 10.07 →
// 10.91. This one only falls while nothing is counted.
func (r *Rates) PerSecond(k Kind, widths int) float64 {
	if k >= numKinds {
		return 0
	}
	t := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotateLocked(t)
	back := r.ring.n - 1
	if widths > 0 && int64(widths) < back {
		back = int64(widths)
	}
	since := max(t.Sub(r.ring.epoch), 0)
	stretch := time.Duration(back) * r.ring.width
	var sum float64
	for i := range back + 1 {
		kk := r.ring.head - i
		if kk < 0 {
			break
		}
		v := float64(r.slots[r.ring.slot(kk)][k])
		if i == back && since > stretch {
			inHead := since - time.Duration(r.ring.head)*r.ring.width
			v *= 1 - float64(inHead)/float64(r.ring.width)
		}
		sum += v
	}
	// Over at least a second: a window a few milliseconds old would turn a
	// handful of events into a huge rate.
	over := max(min(since, stretch), min(stretch, time.Second))
	return sum / over.Seconds()
}
