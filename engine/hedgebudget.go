package engine

import "time"

// hedgeBudget bounds hedges twice over, by the same hedge.budget ratio:
// in cost units (each primary read deposits ratio × its method's weight,
// each hedge withdraws its weight: a hedge of eth_getLogs costs six of
// eth_blockNumber) and in requests (each primary deposits ratio, each
// hedge withdraws 1). A hedge goes out only when both hold it. In cost
// units alone, light methods spent what heavy ones deposited: at a budget
// of 0.10, 19.3 % of the calls of a mixed load were hedges (seeds audit,
// stop 56), where the contract is "hedges may add at most this share of
// requests" (ARCHITECTURE.md) and the provider meters both.
type hedgeBudget struct {
	cost, count *budgetBucket
}

func newHedgeBudget(ratio, burst float64, now func() time.Time) *hedgeBudget {
	return &hedgeBudget{cost: newBudgetBucket(ratio, burst, now), count: newBudgetBucket(ratio, burst, now)}
}

// deposit credits primary requests: calls of weight units in all (an
// upstream batch's calls at once).
func (b *hedgeBudget) deposit(units float64, calls int) {
	b.cost.deposit(units)
	b.count.deposit(float64(calls))
}

// withdraw takes a hedge of calls requests and weight units (an upstream
// batch's hedge carries each of its calls again), if both buckets hold it.
func (b *hedgeBudget) withdraw(units float64, calls int) bool {
	if !b.count.withdraw(float64(calls)) {
		return false
	}
	if !b.cost.withdraw(units) {
		b.count.refund(float64(calls))
		return false
	}
	return true
}

// holds says whether both buckets hold a hedge of calls requests and
// weight units now, without taking it.
func (b *hedgeBudget) holds(units float64, calls int) bool {
	_, count, _ := b.count.state()
	_, cost, _ := b.cost.state()
	return count >= float64(calls) && cost >= units
}

// refund returns a hedge that was not sent.
func (b *hedgeBudget) refund(units float64, calls int) {
	b.cost.refund(units)
	b.count.refund(float64(calls))
}

func (b *hedgeBudget) setRatio(r float64) {
	b.cost.setRatio(r)
	b.count.setRatio(r)
}

// state is the cost units' ratio, balance and capacity.
func (b *hedgeBudget) state() (ratio, tokens, capacity float64) { return b.cost.state() }

// requests is the balance and capacity in requests.
func (b *hedgeBudget) requests() (tokens, capacity float64) {
	_, tokens, capacity = b.count.state()
	return tokens, capacity
}
