package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// An endpoint can hang one method and answer the others: a provider whose
// transaction relay or archive backend is down still answers
// eth_blockNumber. Each answer of another method, its probes' too, says it
// is not silent (heard), so the router ranked it as usual again, and ended
// its breaker's run of failures. Seen live: an endpoint that hung every
// eth_sendRawTransaction while it answered its probes took 60 of 60 writes
// (write affinity put it first again after each probe), each lost at the
// request's deadline, beside a healthy endpoint that was never asked.
//
// So a hang charged to an attempt (chargeHang) marks its (endpoint, method)
// pair too, and the router ranks the endpoint after the others for that
// method, as one that looks hung, for a hold of breaker.cooldown, or until
// it answers the method. Past the hold it is ranked by its cost again; if
// the method hangs there again within maxHangHold cooldowns, the hold
// doubles, up to maxHangHold cooldowns: a write a hung relay still takes is
// one a hold, not every one. (The hold is not renewed by the router looking
// at it: a recovered endpoint that write affinity kept from the method was
// marked again every cooldown, for good.)

// maxHangHold bounds a pair's hold, in breaker.cooldowns.
const maxHangHold = 16

// methodHang is the mark of a (endpoint, method) pair whose attempt hung.
// The router reads end alone, without the lock, for every candidate.
type methodHang struct {
	mu  sync.Mutex   // mark's and clear's
	at  atomic.Int64 // when the hold started (unix nanos); 0: never marked, or answered since
	end atomic.Int64 // when it ends (unix nanos); 0 with at
}

// mark notes a hang charged at t; base is breaker.cooldown. Within the
// hold it is the same hang, met by another attempt; past it, a hang again
// within maxHangHold cooldowns doubles the hold.
func (h *methodHang) mark(t time.Time, base time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, hold := h.at.Load(), time.Duration(h.end.Load()-h.at.Load())
	since := time.Duration(t.UnixNano() - at)
	switch {
	case at == 0 || since >= hold+maxHangHold*base:
		hold = base
	case since >= hold:
		hold = min(2*hold, maxHangHold*base)
	default:
		return
	}
	h.at.Store(t.UnixNano())
	h.end.Store(t.Add(hold).UnixNano())
}

// clear ends the mark: the endpoint answered the method. (Read first: no
// lock on the answer path while there is nothing to clear.)
func (h *methodHang) clear() {
	if h.at.Load() == 0 {
		return
	}
	h.mu.Lock()
	h.at.Store(0)
	h.end.Store(0)
	h.mu.Unlock()
}

// held says whether the router ranks the endpoint after the others for the
// method now: within the hold.
func (h *methodHang) held(now time.Time) bool {
	return now.UnixNano() < h.end.Load()
}

// until is when the hold ends, zero when none runs (the Snapshot).
func (h *methodHang) until(now time.Time) time.Time {
	if end := h.end.Load(); now.UnixNano() < end {
		return time.Unix(0, end)
	}
	return time.Time{}
}
