package engine

// reseat puts c, candidate i seen again since the request was ranked (its
// breaker turned the request away, or it fell behind the chain's head),
// where rank would put it now: after every routable candidate, among the
// others in panic routing's order, unused.
func (x *execution) reseat(i int, c candidate) {
	now := x.e.now()
	rank := x.e.panicOrder(c, now)
	j := i + 1
	for j < len(x.order) && (x.order[j].tier == 0 || x.e.panicOrder(x.order[j], now) <= rank) {
		j++
	}
	copy(x.order[i:j-1], x.order[i+1:j])
	copy(x.used[i:j-1], x.used[i+1:j])
	x.order[j-1], x.used[j-1] = c, false
}
