package engine

import (
	"testing"
	"time"
)

type budgetClock struct{ t time.Time }

func (c *budgetClock) now() time.Time { return c.t }

// The bucket holds the burst plus the last 10 s of deposits: a steady
// stream of primaries saves up enough for a shared slowdown's burst of
// hedges, the savings expire, and hedges never pass ratio·N + burst.
func TestBudget_HoldsTheLastTTLOfDepositsAndNeverPassesItsShare(t *testing.T) {
	clk := &budgetClock{t: time.Unix(1_000_000, 0)}
	b := newBudgetBucket(0.1, 10, clk.now)
	primaries, hedges := 0, 0
	// 500 primaries a second for 10 s, no hedge: 500 tokens saved (+ burst).
	for range 10 {
		for range 500 {
			b.deposit(1)
			primaries++
		}
		clk.t = clk.t.Add(time.Second)
	}
	if _, tokens, capacity := b.state(); capacity < 450 || tokens < 450 {
		t.Fatalf("after 10 s at 500/s: %.0f tokens of %.0f; want the last 10 s of deposits saved", tokens, capacity)
	}
	// A slowdown: 300 hedges at once are all allowed.
	for range 300 {
		if !b.withdraw(1) {
			t.Fatalf("hedge %d refused with %.0f primaries' deposits saved", hedges, 0.1*float64(primaries))
		}
		hedges++
	}
	// Hedging on everything drains it; the total stays within ratio·N + burst.
	for range 1000 {
		b.deposit(1)
		primaries++
		for b.withdraw(1) {
			hedges++
		}
	}
	if limit := 0.1*float64(primaries) + 10; float64(hedges) > limit+1e-9 {
		t.Fatalf("%d hedges for %d primaries: over ratio·N + burst = %.1f", hedges, primaries, limit)
	}
	// Quiet for longer than the TTL: the savings expire down to the burst.
	clk.t = clk.t.Add(budgetTTL + time.Second)
	for range 3 {
		b.refund(100)
	}
	if _, tokens, capacity := b.state(); capacity != 10 || tokens > 10 {
		t.Fatalf("after %s without primaries: %.0f tokens of %.0f; want the burst alone", budgetTTL, tokens, capacity)
	}
}
