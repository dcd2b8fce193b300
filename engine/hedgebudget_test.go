package engine

import (
	"math"
	"testing"
	"time"
)

// Heavy reads deposit much, light hedges withdraw little: in cost units
// alone, 1000 primaries of eth_getLogs (weight 6) paid for 610 hedges of
// eth_blockNumber (weight 1), 61 % of the requests at a budget of 0.10.
// Held in requests too, hedges stay within 0.10 of the requests plus the
// burst; and a heavy hedge still needs its weight in cost units.
func TestHedgeBudget_HedgesStayWithinTheShareOfRequestsWhateverTheirWeights(t *testing.T) {
	clk := &budgetClock{t: time.Unix(1_000_000, 0)}
	costOnly := newBudgetBucket(0.1, 10, clk.now)
	both := newHedgeBudget(0.1, 10, clk.now)
	for range 1000 {
		costOnly.deposit(6)
		both.deposit(6, 1)
	}
	light := func(withdraw func(float64) bool) (n int) {
		for withdraw(1) {
			n++
		}
		return n
	}
	if n := light(costOnly.withdraw); n != 610 {
		t.Fatalf("cost units alone: %d light hedges after 1000 heavy primaries, want 610 (the share it let pass)", n)
	}
	if n := light(func(u float64) bool { return both.withdraw(u, 1) }); n < 109 || n > 110 { // 1000 deposits of 0.1 sum to a hair under 100
		t.Fatalf("held in requests too: %d light hedges after 1000 primaries, want 0.10 × 1000 + the burst of 10 = 110", n)
	}
	// Light primaries, heavy hedges: the cost units bind.
	both = newHedgeBudget(0.1, 10, clk.now)
	for range 1000 {
		both.deposit(1, 1)
	}
	n := 0
	for both.withdraw(6, 1) {
		n++
	}
	if n != 18 {
		t.Fatalf("%d hedges of weight 6 after 1000 primaries of weight 1, want (100 + 10) ÷ 6 = 18", n)
	}
	// A refused heavy hedge leaves the requests' balance as it was.
	if tokens, _ := both.requests(); math.Abs(tokens-(110-18)) > 0.01 {
		t.Fatalf("requests' balance %.2f after 18 hedges and a refused one, want %d", tokens, 110-18)
	}
}
