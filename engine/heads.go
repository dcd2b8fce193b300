package engine

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// headTracker is the pool's head and the chain's pace.
//
// The pool head is derived, never accumulated: it is the highest head among
// the endpoints that count (see countsForPool), each carried forward at the
// pace where heads seen at different moments are compared (lagOf). An
// endpoint that stops counting (drained, found on another chain, flagged
// ahead) or whose head went back (a reorg, a restart onto a snapshot) takes
// its head with it. A high-water mark would let one bogus report, once,
// mark every other endpoint as lagging until restart. Which heads may count
// at all is the credibility rule (headrule.go).
type headTracker struct {
	mu      sync.Mutex // serializes the rule: it compares heads across endpoints
	settled bool       // the first credible head was decided (settleStart)
	firstAt int64      // unix nanos of the first head seen (the start-up window)

	top    atomic.Int64 // the pool head, 0 while unknown
	topAt  atomic.Int64 // unix nanos when the pool first saw top at that height
	leader *endpoint    // whose head is top (mu)
	// topFellAt: since when an endpoint at the pool head stands there
	// having gone back to it (its fellFrom, fellAt; the earliest of
	// several), 0 when none has: the chain went back, not just the
	// endpoints left behind. An answer overtaken by a later one (a slow
	// attempt's older head) goes back only until the next sighting.
	topFellAt atomic.Int64

	marks []headMark    // (time, top) at each rise over the last rateSpan (mu)
	rate  atomic.Uint64 // blocks per second, float64 bits; 0 while unknown
}

type headMark struct {
	at   int64
	head int64
}

// rateSpan is how far back the chain's pace is measured.
const rateSpan = int64(2 * time.Minute)

// countsForPool: ep's head may be the pool's (known, not drained, not
// flagged ahead, not a shadow; an endpoint on another chain has its head
// forgotten). A shadow's head is measured against the pool head but never
// sets it, confirms it or outvotes it: a shadow ahead must not get the
// primaries lag-excluded.
func (ep *endpoint) countsForPool() bool {
	return ep.head.Load() > 0 && !ep.atGenesis() && !ep.drained.Load() && !ep.ahead.Load() && !ep.isShadow()
}

// atGenesis: ep's latest head was 0 (observeGenesis), not yet followed by
// another (judgeHead).
func (ep *endpoint) atGenesis() bool { return ep.genesisAt.Load() != 0 }

// reportedHead is ep's latest head: its last, or 0 at genesis.
func (ep *endpoint) reportedHead() int64 {
	if ep.atGenesis() {
		return 0
	}
	return ep.head.Load()
}

// observeGenesis records that ep gave its head as 0 while the pool's head
// is well past it (genesisAnswer): the whole chain behind, out of routing
// for tip-dependent reads until it reports a head again and its probes
// find it in sync.
func (e *Engine) observeGenesis(ep *endpoint) {
	now := e.now()
	first := !ep.atGenesis()
	ep.genesisAt.Store(now.UnixNano())
	if first {
		ep.setLastError(fmt.Sprintf("head 0 (genesis) while the pool's head is %d: the node restarted or is resyncing", e.heads.top.Load()), now)
		e.poolChanged()
	}
	ep.lagGood.Store(0)
	e.evaluateLag(ep, false)
}

// refreshPoolHead recomputes the pool head from the endpoints that count and
// says whether it changed. h.mu is held.
func (e *Engine) refreshPoolHead() bool {
	h := &e.heads
	var lead *endpoint
	for _, ep := range e.endpoints {
		if !ep.countsForPool() {
			continue
		}
		if lead == nil || ep.head.Load() > lead.head.Load() ||
			ep.head.Load() == lead.head.Load() && ep.headSince.Load() < lead.headSince.Load() {
			lead = ep
		}
	}
	var top, at, fellAt int64
	if lead != nil {
		top, at = lead.head.Load(), lead.headSince.Load()
		for _, ep := range e.endpoints {
			if ep.countsForPool() && ep.head.Load() == top && ep.fellFrom.Load() > 0 && (fellAt == 0 || ep.fellAt.Load() < fellAt) {
				fellAt = ep.fellAt.Load()
			}
		}
	}
	h.leader = lead
	h.topFellAt.Store(fellAt)
	old, oldAt := h.top.Load(), h.topAt.Load()
	if top == old && at == oldAt {
		return false
	}
	h.top.Store(top)
	h.topAt.Store(at)
	switch {
	case top > old:
		h.mark(top, at)
	case top < old:
		// The marks were another head's; the pace measured so far stays.
		h.marks = h.marks[:0]
		if top > 0 {
			h.marks = append(h.marks, headMark{at, top})
		}
	}
	return true
}

// mark records a rise of the pool head and re-measures the pace. The pace is
// the upper median of the rates between consecutive rises: a stretch where
// the chain (or the whole pool) stood still is one slow sample, not an
// average that reads the chain as slower for the next two minutes, and a
// pace read too low would take honest heads for jumps. h.mu is held.
func (h *headTracker) mark(v, at int64) {
	h.marks = append(h.marks, headMark{at, v})
	for len(h.marks) > 3 && (at-h.marks[0].at > rateSpan || len(h.marks) > 256) {
		h.marks = h.marks[1:]
	}
	if len(h.marks) < 3 || at-h.marks[0].at < int64(time.Second) {
		return
	}
	rates := make([]float64, 0, len(h.marks)-1)
	for i := 1; i < len(h.marks); i++ {
		if dt := h.marks[i].at - h.marks[i-1].at; dt > 0 {
			rates = append(rates, float64(h.marks[i].head-h.marks[i-1].head)/(float64(dt)/float64(time.Second)))
		}
	}
	if len(rates) == 0 {
		return
	}
	slices.Sort(rates)
	h.rate.Store(math.Float64bits(rates[len(rates)/2]))
}

func (h *headTracker) blocksPerSecond() float64 { return math.Float64frombits(h.rate.Load()) }

// blocksIn is how many blocks the chain makes in d nanoseconds at the pace.
func (h *headTracker) blocksIn(d int64) float64 {
	if d <= 0 {
		return 0
	}
	return h.blocksPerSecond() * float64(d) / float64(time.Second)
}

// carried is how many blocks the chain may have made in d at the pace,
// rounded up.
func (h *headTracker) carried(d int64) int64 { return int64(math.Ceil(h.blocksIn(d))) }

// expectedHead is the head the chain is expected to have reached at now:
// the pool head carried forward at the pace, rounded down (the blocks it
// has surely made by now, where carried credits every block it may have
// made). 0 while the pool head is unknown.
func (e *Engine) expectedHead(now int64) int64 {
	h := &e.heads
	top := h.top.Load()
	if top == 0 {
		return 0
	}
	return top + int64(h.blocksIn(now-h.topAt.Load()))
}

// blockExpected says whether block n is expected to exist by now: at most
// expectedHead, or any block while the pool head is unknown.
func (e *Engine) blockExpected(n int64) bool {
	top := e.expectedHead(e.now().UnixNano())
	return top == 0 || n <= top
}

// blockMaybeMade says whether block n is the one after expectedHead. The
// pool head is seen late (a probe comes up to probes.interval after the
// block), so that block may already exist on an endpoint, and a client
// that follows the head elsewhere (a newHeads feed) asks for it at once.
func (e *Engine) blockMaybeMade(n int64) bool {
	top := e.expectedHead(e.now().UnixNano())
	return top > 0 && n == top+1
}

// observeHead records a head height seen for an endpoint (by a probe or in
// a passive answer), applies the credibility rule to it, then the lag rule;
// probe says whether this observation counts towards readmission.
func (e *Engine) observeHead(ep *endpoint, head int64, probe bool) {
	if head == 0 && probe && !ep.excluded(ExcludeWrongChain) && e.heads.top.Load() > e.cfg.Chain.MaxHeadLag {
		e.observeGenesis(ep)
		return
	}
	if head <= 0 || ep.excluded(ExcludeWrongChain) {
		// Another chain's height says nothing about this one's; a probe
		// still re-checks the lag.
		if probe {
			e.evaluateLag(ep, true)
		}
		return
	}
	if f := ep.fault.Load(); f != nil && f.Mode == FaultStale {
		if frozen := ep.staleHead.Load(); frozen > 0 {
			head = frozen
		}
	}
	if e.judgeHead(ep, head, e.now().UnixNano()) {
		e.reevaluateLags(ep)
	}
	e.evaluateLag(ep, probe)
}

// reevaluateLags re-checks the lag of every endpoint but except, after the
// pool head moved.
func (e *Engine) reevaluateLags(except *endpoint) {
	for _, o := range e.endpoints {
		if o != except {
			e.evaluateLag(o, false)
		}
	}
}

// poolChanged recomputes the pool head after an endpoint stopped or started
// counting (drained, undrained, found on another chain).
func (e *Engine) poolChanged() {
	e.heads.mu.Lock()
	changed := e.heads.settled && e.refreshPoolHead()
	e.heads.mu.Unlock()
	if changed {
		e.reevaluateLags(nil)
	}
}

// forgetHead drops ep's head (it turned out to be on another chain) and
// recomputes the pool head from the others.
func (e *Engine) forgetHead(ep *endpoint) {
	e.heads.mu.Lock()
	ep.head.Store(0)
	ep.headSince.Store(0)
	changed := e.heads.settled && e.refreshPoolHead()
	e.heads.mu.Unlock()
	if changed {
		e.reevaluateLags(nil)
	}
}

// lagOf is how far ep's head is behind the pool head (0 when unknown).
// Heads are seen at different moments (a probe every few seconds, a passive
// answer now): ep's head is carried forward at the chain's measured pace to
// the moment the pool first saw its head, so an endpoint probed a while ago
// is not taken for one that fell behind. A head that stopped advancing is
// seen again by the next probe, at its old height, and its lag shows.
//
// Before the pace is known (the first probe rounds), a head seen before the
// pool head appeared proves only the lag it had then, behind the pool head
// of that moment: the chain may have made any number of blocks since
// (every endpoint slowed by a second just after start shifted the probes
// apart and marked healthy ones lagging). Its next sighting proves more.
func (e *Engine) lagOf(ep *endpoint) int64 {
	h := ep.head.Load()
	top := e.heads.top.Load()
	if ep.atGenesis() && top > 0 {
		return top
	}
	if h == 0 || top == 0 {
		return 0
	}
	// A probe asked for the head since and got none: the blocks made after
	// that are not credited, or a node whose eth_blockNumber fails while
	// its other reads answer would show lag 0 for ever.
	lost := ep.headLostAt.Load()
	headLost := lost > ep.headAt.Load()
	if e.heads.blocksPerSecond() == 0 && ep.headAt.Load() < e.heads.topAt.Load() && !headLost {
		return max(min(ep.topSeen.Load(), top)-h, 0)
	}
	// Every block the chain may have made since is credited (ceil): a
	// block boundary between the two sightings is not lag, and counting
	// it showed healthy endpoints one block behind on every other tick.
	// Lag is what is proven; a frozen head still shows at its next probe.
	upTo := e.heads.topAt.Load()
	if headLost {
		upTo = min(upTo, lost)
	}
	h += e.heads.carried(upTo - ep.headAt.Load())
	return max(top-h, 0)
}

// provenBehind says whether ep's empty read answers (a null receipt, a
// Solana null status, a blockhash it does not know) may be its lag's: it
// has a proven lag (lagOf). By its last seen head alone an endpoint in sync
// was behind whenever another had answered a newer head since its last
// probe, and on Solana nearly always (a probe every 5 s, 2.5 slots a
// second): 20 polls of an EVM transaction not mined yet made 46 upstream
// requests over three sims, 60 polls of a Solana signature not landed
// 95-111, each waiting for another endpoint's empty answer. An answer older
// than one a client already had is still set aside by the slot it was read
// at (readfloor.go).
func (e *Engine) provenBehind(ep *endpoint) bool { return e.lagOf(ep) > 0 }
