package engine

// A read's race deadline under a learnt deadline near the request's own:
// the next candidate starts while the request still has room for it.

import (
	"slices"
	"time"
)

// deadlineHalf: the endpoint's deadline (learnt or capped at the request's,
// "ceiling") leaves the next candidate less than half the request's time;
// a read races the next candidate at half of it, and the endpoint is
// charged a hang only at its own deadline.
const deadlineHalf = "half"

// raceCeiling caps a read's race deadline (where the next candidate starts
// beside it; nothing is cut) at half of room, the time the request has
// left when the attempt starts, while another candidate is there to race;
// the verdict on the endpoint (judge) is left where it was, so that an
// endpoint answering slowly at its own pace is raced, never charged
// (awaitsJudgement, judgeBorrowed). Half, because the next candidate then
// has at least as long as this one had alone: a rule that needs no guess
// at which candidate comes next or how long it takes, and the deadlines of
// a pool's endpoints are, in the common case, far below it. An endpoint
// whose deadline reached the request's (a method whose p99 is a third of
// it or more, or a loaded machine) was raced at the request's deadline,
// that is never: hung, it cost the client an error ("request timed out
// ... (s0 still working on it)") where the healthy endpoint beside it
// answered in 20 ms.
func raceCeiling(race, judge time.Duration, src string, room time.Duration, others bool) (time.Duration, time.Duration, string) {
	c := room / 2
	if !others || race <= c || c <= 0 {
		return race, judge, src
	}
	judge = max(judge, race)
	if judge >= room {
		// Judged at the request's deadline, the verdict was lost to it:
		// that deadline ends the held attempt first, and a hung endpoint at
		// the ceiling was charged 0 to 2 times in 3 hung reads. It is
		// judged a twentieth of the request's time before.
		judge = room - room/20
	}
	return c, judge, deadlineHalf
}

// hasOtherCandidate says whether x has a candidate not yet asked.
func (x *execution) hasOtherCandidate() bool { return slices.Contains(x.used, false) }

// room is the time x's request has left: what an attempt started now may
// take before the request's deadline.
func (x *execution) room(limit time.Duration) time.Duration {
	if dl, ok := x.ctx.Deadline(); ok {
		return dl.Sub(x.e.now())
	}
	return limit
}
