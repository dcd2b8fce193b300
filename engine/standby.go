package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Active/standby ([[endpoints]] role = "standby"), the failover seed's
// minimum for production: a standby gets no client traffic (reads, writes,
// filters, hedges, exploration) while enough primaries can take the
// request. Standbys join when
//
//   - no primary can take this request (every primary drained, on the wrong
//     chain, open, half-open, backing off, lagging for a tip-dependent read,
//     below the block asked for), or
//   - the ready primaries fall below router.panic_threshold of the primaries
//     (ready: routable with a closed breaker; a half-open primary has not
//     recovered yet, and one whose breaker breaker.max_open_share kept
//     from opening within the last breaker.cooldown is failing as if open:
//     the cap is there so that breakers never empty the pool, and a
//     standby is the pool not being emptied).
//
// Once joined, standbys are ranked with the routable primaries by the same
// score (the primaries left are likely overloaded: the standbys share the
// load rather than only catching failovers), and panic routing counts them
// in its pool, so healthy standbys keep panic routing off. When the
// primaries recover, the next request is routed without them (their
// in-flight attempts finish). Probes probe standbys as any endpoint, so
// their health, head and latency are known before they are needed.
//
// The Snapshot's standby_active says whether standbys take traffic now: on
// when a request was routed with a routable standby among its candidates
// (or when the primaries' state calls for them, even with no traffic), off
// once the primaries are ready again and no request needed a standby for
// standbyHold. Both changes are pool events.

const standbyHold = time.Second

type standbyState struct {
	active  atomic.Bool
	lastUse atomic.Int64 // unix nanos: a request was routed with a standby
	mu      sync.Mutex
	on      bool
	why     string
}

// primaryCount is what the standby decision reads of the pool's primaries.
type primaryCount struct {
	ready, pool int // ready: routable with a closed breaker the open cap is not holding closed (heldClosedByCap)
}

// needsStandby: the primaries' state calls for the standbys whatever the
// request (see the top of the file).
func (e *Engine) needsStandby(p primaryCount) bool {
	return p.ready == 0 || float64(p.ready) < e.cfg.Router.PanicThreshold*float64(p.pool)
}

func (e *Engine) standbyWhy(p primaryCount) string {
	if p.ready == 0 {
		return fmt.Sprintf("primaries routable 0 of %d", p.pool)
	}
	return fmt.Sprintf("primaries routable %d of %d, below router.panic_threshold %.2f", p.ready, p.pool, e.cfg.Router.PanicThreshold)
}

// routableStandbys names the standbys that could take a request now.
func (e *Engine) routableStandbys(now time.Time) []string {
	var names []string
	for _, ep := range e.endpoints {
		if ep.standbyLike() && !ep.excluded(ExcludeWrongChain) && e.routable(ep, now) {
			names = append(names, ep.Name)
		}
	}
	return names
}

// useStandby records that a request was routed with standbys among its
// candidates (standbys names them); why says what called for them.
func (e *Engine) useStandby(now time.Time, standbys []candidate, why func() string) {
	s := &e.standby
	s.lastUse.Store(now.UnixNano())
	if s.active.Load() {
		return
	}
	names := make([]string, len(standbys))
	for i, c := range standbys {
		names[i] = c.ep.Name
	}
	e.standbyOn(why(), names)
}

func (e *Engine) standbyOn(why string, names []string) {
	s := &e.standby
	s.mu.Lock()
	if s.on {
		s.mu.Unlock()
		return
	}
	s.on, s.why = true, why
	s.active.Store(true)
	s.mu.Unlock()
	e.events.add(Event{Type: EventPool, From: "primaries", To: "standby",
		Message: why + ": standby " + strings.Join(names, ", ") + " " + Plural(len(names), "takes", "take") + " traffic"})
}

// settleStandby is the periodic upkeep (watch): standbys come in when the
// primaries' state calls for them, even with no traffic, and go out once
// it no longer does and no request needed them for standbyHold.
func (e *Engine) settleStandby(now time.Time, p primaryCount) {
	s := &e.standby
	if !e.hasStandbys() {
		// The last standby or canary changed role (SetRole): nothing is
		// left to take traffic as one, so the state ends now.
		if s.active.Load() {
			e.standbyOff(fmt.Sprintf("no standby or canary left (primaries routable %d of %d): standby state over", p.ready, p.pool))
		}
		return
	}
	if e.needsStandby(p) {
		if !s.active.Load() {
			if names := e.routableStandbys(now); len(names) > 0 {
				s.lastUse.Store(now.UnixNano())
				e.standbyOn(e.standbyWhy(p), names)
			}
		} else {
			s.lastUse.Store(now.UnixNano())
		}
		return
	}
	if !s.active.Load() || now.Sub(time.Unix(0, s.lastUse.Load())) < standbyHold {
		return
	}
	var names []string
	for _, ep := range e.endpoints {
		if ep.standbyLike() {
			names = append(names, ep.Name)
		}
	}
	e.standbyOff(fmt.Sprintf("primaries routable %d of %d: standby %s %s no new traffic (in-flight requests finish)",
		p.ready, p.pool, strings.Join(names, ", "), Plural(len(names), "takes", "take")))
}

// standbyOff ends the standby state with its event (once).
func (e *Engine) standbyOff(msg string) {
	s := &e.standby
	s.mu.Lock()
	if !s.on {
		s.mu.Unlock()
		return
	}
	s.on, s.why = false, ""
	s.active.Store(false)
	s.mu.Unlock()
	e.events.add(Event{Type: EventPool, From: "standby", To: "primaries", Message: msg})
}

func (e *Engine) standbyInfo() (bool, string) {
	s := &e.standby
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on, s.why
}
