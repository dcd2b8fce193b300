package engine

import (
	"math"
	"time"
)

// While rpcdash itself is the slow part, an overdue read's race waits and
// is looked at again a deadline later (run's held). A look that would come
// at or after the request's own deadline turns the wait into a certain
// error beside endpoints that answer: the read timed out "(s0 still
// working on it)" under a load average of 7-12, its deadline half the
// request's. So the last look comes before the request's deadline, and
// there the read races whatever rpcdash's load: one more request costs
// less than a client's error.

// holdFor is how long a's held race waits before it is looked at again: a
// deadline, or half the time the request has left when that is shorter.
func (x *execution) holdFor(a *attempt) time.Duration {
	left := x.room(noRequestDeadline)
	if a.deadline < left/2 {
		return a.deadline
	}
	return max(left/2, 0)
}

// lastLook says whether holding a's race once more would outlast the
// request: it has no more than a deadline left.
func (x *execution) lastLook(a *attempt) bool {
	return x.room(noRequestDeadline) <= a.deadline
}

// noRequestDeadline is the room of a request without a deadline.
const noRequestDeadline = time.Duration(math.MaxInt64)
