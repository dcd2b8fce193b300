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
// method, as one that looks hung, until it answers the method. Past the
// hold one call of the method is let through first (a trial); if it hangs
// too, the hold doubles, from breaker.cooldown up to maxHangHold times it:
// a write a hung relay still takes is one every hold, not every one.

// maxHangHold bounds a pair's hold, in breaker.cooldowns.
const maxHangHold = 16

// methodHang is the mark of a (endpoint, method) pair whose attempt hung.
type methodHang struct {
	at    atomic.Int64 // when the hold started (unix nanos); 0: not marked
	mu    sync.Mutex
	hold  time.Duration
	trial bool // past the hold, a call was let through
}

// mark notes a hang charged at t; base is breaker.cooldown. A pair marked
// already is not marked again by another attempt meeting the same hang,
// unless its trial was let through: the hold doubles.
func (h *methodHang) mark(t time.Time, base time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at := h.at.Load()
	switch {
	case at == 0:
		h.hold = base
	case h.trial || t.UnixNano()-at >= int64(h.hold):
		h.hold = min(2*h.hold, maxHangHold*base)
	default:
		return
	}
	h.trial = false
	h.at.Store(t.UnixNano())
}

// clear ends the mark: the endpoint answered the method. (Read first: no
// lock on the answer path while there is nothing to clear.)
func (h *methodHang) clear() {
	if h.at.Load() == 0 {
		return
	}
	h.mu.Lock()
	h.at.Store(0)
	h.hold, h.trial = 0, false
	h.mu.Unlock()
}

// held says whether the router ranks the endpoint after the others for the
// method now. Past the hold the first caller is let through as the trial
// (told no) and the hold starts again for everyone else.
func (h *methodHang) held(now time.Time) bool {
	if h.at.Load() == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	at := h.at.Load()
	if at == 0 {
		return false
	}
	if now.UnixNano()-at < int64(h.hold) {
		return true
	}
	h.trial = true
	h.at.Store(now.UnixNano())
	return false
}

// until is when the hold ends, zero when none runs (the Snapshot).
func (h *methodHang) until(now time.Time) time.Time {
	if h.at.Load() == 0 {
		return time.Time{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	at := h.at.Load()
	if at == 0 {
		return time.Time{}
	}
	end := time.Unix(0, at).Add(h.hold)
	if !now.Before(end) {
		return time.Time{}
	}
	return end
}
