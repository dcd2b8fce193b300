package engine

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// openCap is breaker.max_open_share: breakers may hold at most that share
// of the pool open at once on soft evidence (failures in a row, hangs),
// and never the last endpoint. Breakers never empty the pool on their own:
// when every endpoint fails alike the fault is more likely shared (the
// network, the chain, rpcdash) than each endpoint's, and an empty pool turns
// a slowdown into an outage. Hard evidence is not capped: an endpoint that
// refuses connections opens its breaker whatever the share, and drained or
// wrong-chain endpoints are not part of the pool the share is taken of.
type openCap struct {
	mu   sync.Mutex
	held map[*endpoint]bool // open or half-open on soft evidence
	kept map[*endpoint]*keptClosed
}

// keptClosed is an episode of the cap keeping one endpoint's breaker
// closed: said once when it starts and once when it ends (settleOpenCap,
// or the breaker opens after all), with the refusals counted in between,
// not one event per failure that asks again.
type keptClosed struct {
	since   time.Time // its last refusal is the endpoint's openRefusedAt
	refused int
}

// allowOpen is every breaker's open gate. It runs under that breaker's lock
// and takes only the cap's own lock and endpoints' state locks.
func (e *Engine) allowOpen(ep *endpoint, hard bool, why string) bool {
	c := &e.openCap
	c.mu.Lock()
	if c.held == nil {
		c.held, c.kept = map[*endpoint]bool{}, map[*endpoint]*keptClosed{}
	}
	if hard || ep.isShadow() {
		// A shadow is not in the pool the share is taken of: its breaker
		// opening takes nothing from the clients.
		ended := c.endKept(e, ep, "it opens on hard evidence")
		c.mu.Unlock()
		e.addEnded(ended)
		return true
	}
	// An endpoint excluded for head lag is held out too: it takes no read
	// of the chain's tip, most reads, and counting it as the pool's let the
	// last current endpoint's breaker open on a slowdown, which left the
	// tip reads to the lagging one (stale answers, relayed as any other).
	pool, held, lagging := 0, 0, 0
	for _, o := range e.endpoints {
		if o.refusing.Load() || !o.answersClients() {
			continue
		}
		pool++
		switch {
		case o == ep:
		case c.held[o]:
			held++
		case o.lagExcluded.Load():
			held++
			lagging++
		}
	}
	limit := openLimit(e.cfg.Breaker.MaxOpenShare, pool)
	if held < limit {
		c.held[ep] = true
		ended := c.endKept(e, ep, "the cap lets it open")
		c.mu.Unlock()
		e.addEnded(ended)
		return true
	}
	now := e.now()
	ep.openRefusedAt.Store(now.UnixNano())
	k := c.kept[ep]
	if k != nil {
		k.refused++
		c.mu.Unlock()
		return false
	}
	c.kept[ep] = &keptClosed{since: now, refused: 1}
	c.mu.Unlock()
	e.events.add(Event{Type: EventPool, Endpoint: ep.Name, From: "closed", To: "open refused",
		Message: fmt.Sprintf("breaker not opened (%s): %d of %d endpoints already held out by breakers%s, breaker.max_open_share %.2f allows %d; "+
			"while it is held closed, further refusals are counted, not repeated", why, held, pool, lagNote(lagging), e.cfg.Breaker.MaxOpenShare, limit)})
	return false
}

// endKept ends ep's kept-closed episode, if one is on, and returns the
// event that says so (to add once c.mu is released), nil if none was on.
// Under c.mu.
func (c *openCap) endKept(e *Engine, ep *endpoint, why string) *Event {
	k := c.kept[ep]
	if k == nil {
		return nil
	}
	delete(c.kept, ep)
	to := "open"
	if why == "" {
		to, why = "closed", fmt.Sprintf("none for breaker.cooldown %s", e.cfg.Breaker.Cooldown)
	}
	last := time.Unix(0, ep.openRefusedAt.Load())
	return &Event{Type: EventPool, Endpoint: ep.Name, From: "open refused", To: to,
		Message: fmt.Sprintf("breaker.max_open_share no longer keeps its breaker closed: %d opens refused over %s; %s",
			k.refused, last.Sub(k.since).Round(time.Millisecond), why)}
}

func (e *Engine) addEnded(ev *Event) {
	if ev != nil {
		e.events.add(*ev)
	}
}

// settleOpenCap ends the kept-closed episodes with no refusal for a
// breaker.cooldown (heldClosedByCap no longer holds).
func (e *Engine) settleOpenCap(now time.Time) {
	c := &e.openCap
	var ended []*Event
	c.mu.Lock()
	for ep := range c.kept {
		if !e.heldClosedByCap(ep, now) {
			ended = append(ended, c.endKept(e, ep, ""))
		}
	}
	c.mu.Unlock()
	for _, ev := range ended {
		e.addEnded(ev)
	}
}

// heldClosedByCap says whether breaker.max_open_share kept ep's breaker
// from opening within the last breaker.cooldown: it fails as if open.
func (e *Engine) heldClosedByCap(ep *endpoint, now time.Time) bool {
	at := ep.openRefusedAt.Load()
	return at != 0 && now.Sub(time.Unix(0, at)) < e.cfg.Breaker.Cooldown
}

// lagNote says how many of the endpoints held out are out for head lag.
func lagNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" or head lag (%d lagging)", n)
}

// openLimit is how many of pool endpoints breakers may hold open at once:
// the share, rounded down, at least one when there are two or more, and
// never all of them (a share of 1 lifts the cap).
func openLimit(share float64, pool int) int {
	if share >= 1 {
		return pool
	}
	if pool < 2 {
		return 0
	}
	n := int(math.Floor(share*float64(pool) + 1e-9))
	return min(max(n, 1), pool-1)
}

// releaseOpen gives back an endpoint's slot when its breaker closes.
func (e *Engine) releaseOpen(ep *endpoint) {
	c := &e.openCap
	c.mu.Lock()
	delete(c.held, ep)
	c.mu.Unlock()
}

// markSilentIfCapRefused marks ep silent when breaker.max_open_share
// refused to open its breaker at or after since (a hang it was just charged
// with): the breaker cannot take it out, so the router ranks it last.
func (ep *endpoint) markSilentIfCapRefused(since time.Time) {
	if at := ep.openRefusedAt.Load(); at >= since.UnixNano() {
		ep.silentAt.Store(at)
	}
}
