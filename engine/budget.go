package engine

import (
	"sync"
	"time"
)

// budgetTTL is how long a primary's deposit stays in the hedge budget, as
// in Finagle's RetryBudget (its ttl, 10 s by default).
const budgetTTL = 10 * time.Second

const budgetSlots = 10 // one per second of budgetTTL

// budgetBucket is Finagle's backup-request budget: every primary request
// deposits ratio × its weight, every hedge withdraws its weight. A deposit
// stays for budgetTTL, so the balance is capped at burst plus the deposits
// of the last budgetTTL: at 500 primaries a second and a budget of 0.10, a
// shared slowdown may draw up to 500 + burst hedges at once, which it takes
// to get every request out of a 200 ms window where the whole pool is slow;
// a fixed small cap would leave most of them in it. Tokens are only ever
// deposited by primaries (after the initial burst), so over any run of N
// primaries hedges still add at most ratio·N + burst cost units.
type budgetBucket struct {
	mu     sync.Mutex
	now    func() time.Time
	ratio  float64
	burst  float64
	tokens float64
	slots  [budgetSlots]float64 // deposits per second, the newest at second newest
	newest int64                // unix second of the newest slot
	recent float64              // sum of slots
}

func newBudgetBucket(ratio, burst float64, now func() time.Time) *budgetBucket {
	return &budgetBucket{now: now, ratio: ratio, burst: burst, tokens: burst}
}

// advanceLocked expires the deposits older than budgetTTL, and the tokens
// they had allowed beyond what the bucket may hold now.
func (b *budgetBucket) advanceLocked() {
	sec := b.now().Unix()
	if sec > b.newest {
		for s := b.newest + 1; s <= sec && s <= b.newest+budgetSlots; s++ {
			b.slots[s%budgetSlots] = 0
		}
		b.newest = sec
		b.recent = 0
		for _, v := range b.slots {
			b.recent += v
		}
	}
	b.tokens = min(b.tokens, b.capLocked())
}

func (b *budgetBucket) capLocked() float64 { return b.burst + b.recent }

func (b *budgetBucket) deposit(units float64) {
	b.mu.Lock()
	b.advanceLocked()
	d := b.ratio * units
	b.slots[b.newest%budgetSlots] += d
	b.recent += d
	b.tokens = min(b.tokens+d, b.capLocked())
	b.mu.Unlock()
}

func (b *budgetBucket) refund(units float64) {
	b.mu.Lock()
	b.advanceLocked()
	b.tokens = min(b.tokens+units, b.capLocked())
	b.mu.Unlock()
}

func (b *budgetBucket) withdraw(units float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked()
	if b.tokens < units {
		return false
	}
	b.tokens -= units
	return true
}

// state is the ratio in force, the balance and what the bucket may hold now.
func (b *budgetBucket) state() (ratio, tokens, capacity float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked()
	return b.ratio, b.tokens, b.capLocked()
}

func (b *budgetBucket) setRatio(r float64) {
	b.mu.Lock()
	b.ratio = r
	b.mu.Unlock()
}
