package engine

import (
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// WindowDistribution is distributionOf for the external tests, which fill
// windows themselves.
func WindowDistribution(w *window.Latency) Distribution { return distributionOf(w) }

// SetQueueBaseSpan shortens how long the queue guard's bases hold, for a
// test that cannot wait 30 s; it returns the restore.
func SetQueueBaseSpan(d time.Duration) (restore func()) {
	old := queueBaseSpan
	queueBaseSpan = d
	return func() { queueBaseSpan = old }
}

// HeldAnswers is how many late answers wait out of the named endpoint's
// windows (lateanswers.go); the Snapshot counts them in, so only this tells
// held from learnt.
func (e *Engine) HeldAnswers(name string) int {
	ep, err := e.endpoint(name)
	if err != nil {
		panic(err)
	}
	return len(ep.late.latencies(nil))
}

// OnRanked runs f between each request's ranking and its first attempt, as
// another request taking a half-open trial would; nil removes it.
func (e *Engine) OnRanked(f func()) {
	if f == nil {
		e.ranked.Store(nil)
		return
	}
	e.ranked.Store(&f)
}

// TakeTrial acquires an attempt of the named endpoint's breaker as a
// request in flight does (a half-open trial when it is half-open), and
// returns whether it was granted and its release.
func (e *Engine) TakeTrial(name string) (ok bool, release func()) {
	ep, err := e.endpoint(name)
	if err != nil {
		panic(err)
	}
	ok, trial := ep.breaker.Acquire()
	return ok, func() {
		if ok {
			ep.breaker.Release(trial)
		}
	}
}

// NoteStall notes a stall of rpcdash's own from now for d, as the lag
// monitor's ticker notes one when it wakes at its end: a test stalls the
// engine by this controlled means rather than by loading the machine and
// hoping.
func (e *Engine) NoteStall(d time.Duration) { e.lag.add(time.Now().Add(d), d) }

// NoteQueued notes a run-queue wait of d ending at, as probeQueue notes
// one (ownstall.go).
func (e *Engine) NoteQueued(at time.Time, d time.Duration) { e.lag.addQueued(at, d) }

// LostMostOf says whether rpcdash lost at least half of the last d to its
// own slowness, the rule under which an answer is not learnt (ownstall.go).
func (e *Engine) LostMostOf(d time.Duration) bool { return e.lostMostOf(d) }

// SetMaxFilters lowers how many filters the engine holds, for a test that
// fills the table.
func (e *Engine) SetMaxFilters(n int) {
	e.filters.mu.Lock()
	e.filters.max = n
	e.filters.mu.Unlock()
}

// ReclaimIdleAfter is how long a keep-alive connection idles before it may
// make room at server.max_conns.
const ReclaimIdleAfter = reclaimIdleAfter

// IdleConns is how many of the RPC port's connections are idle between
// two requests, as the connection cap counts them.
func (e *Engine) IdleConns() int {
	l := e.rpcLn.(*connLimitListener)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.idle.Len()
}

// IdleConnsArriving is how many of those have had bytes of a next request
// come in since they went idle.
func (e *Engine) IdleConnsArriving() int {
	l := e.rpcLn.(*connLimitListener)
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for el := l.idle.Front(); el != nil; el = el.Next() {
		if lc := el.Value.(*limitedConn); lc.reads.Load() != lc.readsAtIdle {
			n++
		}
	}
	return n
}

// port is the RPC port's connection cap, or the admin port's.
func (e *Engine) port(admin bool) *connLimitListener {
	if admin {
		return e.adminLn.(*connLimitListener)
	}
	return e.rpcLn.(*connLimitListener)
}

// ConnsHeld is how many connections hold a slot of the port's
// server.max_conns.
func (e *Engine) ConnsHeld(admin bool) int { return len(e.port(admin).slots) }

// RequestsArriving is how many of the port's connections have a request
// arriving: its header, or a body its handler waits on.
func (e *Engine) RequestsArriving(admin bool) (headers, bodies int) {
	l := e.port(admin)
	l.mu.Lock()
	defer l.mu.Unlock()
	for lc := range l.open {
		switch requestStage(lc.progress.stage.Load()) {
		case stageHeader:
			headers++
		case stageBody:
			bodies++
		}
	}
	return headers, bodies
}

// BytesArrived is how many bytes the port's open connections have sent.
func (e *Engine) BytesArrived(admin bool) uint64 {
	l := e.port(admin)
	l.mu.Lock()
	defer l.mu.Unlock()
	var n uint64
	for lc := range l.open {
		n += lc.progress.bytes.Load()
	}
	return n
}
