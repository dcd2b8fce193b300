package engine

import (
	"math"
	"sync"
	"time"
)

// A read of the chain's current state may be answered as of a slot the
// answer names: a Solana answer's context.slot (solana_context.go), or an
// EVM latest block, its own number (latestblock.go). One
// node never answers as of a slot below one it answered as of before;
// endpoints a few apart, within chain.max_head_lag, would, answer by
// answer. So an answer read at below the highest already returned, from
// another endpoint than the one that returned it, is set aside while
// another endpoint is asked, and relayed only if none does better
// (setAside), or once every attempt left hangs (failBesideHangs), not at
// the request's deadline; its slot cannot be raised as a head answer's
// is: the rest of the answer is that slot's. The endpoint that returned
// the highest is relayed as it came: its answers crossing a slot's edge
// side by side, which its own clients see too. Which endpoint is behind is not asked of
// the probes: nodes drift a slot or three apart and back within a probe
// interval, and judged by the heads the probes saw, an endpoint stalled
// since was taken as current.
//
// An endpoint whose answer to a method was set aside so ranks after the
// others for that method's reads for belowFloorHold (candidate.behind), and
// a hedge or race goes to the endpoint at the floor again before it
// (againAtHead). Ranked as before, two fast Solana endpoints steadily 2
// slots behind a slower one at the head had every read asked of each: the
// fast answers went below the floor the head's answers kept raising, 2.9-3.0
// upstream requests a read, p50 47 ms against the slow endpoint's own 42 ms.
//
// The floor is only a credible number, as the others are: an endpoint
// flagged ahead does not move it, one beyond the pool head's bound (plus
// the lead of the floor's commitment) holds nothing back, and a lower
// number relayed because no endpoint did better becomes the floor, so
// that later reads do not pay for asking every endpoint.
type readFloor struct {
	mu sync.Mutex
	at int64
	by *endpoint
}

// wentBelow says whether at, what ep's answer was read at, is below the
// credible highest another endpoint returned. lead is how far f's numbers
// run ahead of the heads (leadOf).
func (e *Engine) wentBelow(f *readFloor, lead int64, ep *endpoint, at int64) bool {
	if f == nil || at <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return e.belowFloor(f, lead, ep, at)
}

// belowFloor is wentBelow with f held.
func (e *Engine) belowFloor(f *readFloor, lead int64, ep *endpoint, at int64) bool {
	return at < f.at && ep != f.by && e.floorCredible(f, lead)
}

// floorCredible says whether f's number is within what the pool head
// allows.
func (e *Engine) floorCredible(f *readFloor, lead int64) bool {
	return f.at <= e.floorBound(lead)
}

// floorBound is the highest credible number of a floor whose numbers run
// lead ahead of the heads (a read floor, a head or slot already answered):
// headBound plus the lead, unbounded while the pool head or the chain's
// pace is unknown. Without the pace the pool head is not carried forward,
// and a number read since the last probe, seconds ago, looked beyond it:
// dropped, the floor let 22 to 35 of a client's first 300 confirmed
// getBalance answers go back a slot or two in rpcdash's first seconds. A
// floor set too high then costs a read that asks every endpoint, whose best
// answer below it becomes the floor (noteReadAt), or holds a head floor
// until the pace is known.
func (e *Engine) floorBound(lead int64) int64 {
	bound := e.headBound(e.now().UnixNano())
	if bound >= math.MaxInt64-lead || e.heads.blocksPerSecond() == 0 {
		return math.MaxInt64
	}
	return bound + lead
}

// noteReadAt moves f to at, what the answer relayed from ep was read at:
// up as the chain goes on, down when at went back and was relayed because
// no endpoint asked did better, or f is no longer credible; not for the
// endpoint that holds f answering below it.
func (e *Engine) noteReadAt(f *readFloor, lead, at int64, ep *endpoint) {
	if f == nil || at <= 0 || ep == nil || ep.ahead.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if at > f.at || e.belowFloor(f, lead, ep, at) || at < f.at && !e.floorCredible(f, lead) {
		f.at, f.by = at, ep
	}
}

// belowFloorHold: long enough that an endpoint behind for good costs one
// read an extra attempt a second, short enough that one back at the head
// (nodes drift a slot or three apart and back) is soon first again.
const belowFloorHold = time.Second

// wentBelowLately says whether the endpoint's answer to the method went
// below a read floor within belowFloorHold of now.
func (s *methodStats) wentBelowLately(now time.Time) bool {
	if s == nil {
		return false
	}
	at := s.belowFloorAt.Load()
	return at != 0 && now.UnixNano()-at < int64(belowFloorHold)
}

// backAtFloor clears the mark of ep's answers to method going below a
// floor: its answer was relayed, at the floor or as it. Read first, so
// that the reads of an endpoint never marked (nearly all) write nothing.
func (ep *endpoint) backAtFloor(method string) {
	if s, ok := ep.methods.lookup(method); ok && s.belowFloorAt.Load() != 0 {
		s.belowFloorAt.Store(0)
	}
}
