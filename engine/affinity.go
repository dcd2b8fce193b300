package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// Write affinity (router.write_affinity), read-your-writes as a careful
// router does it: after endpoint A answered a write with a result, for the
// window
//   - later writes go first to A, so that a sender's transactions reach
//     one mempool in nonce order (providers that do not gossip would
//     otherwise hold a gap);
//   - reads of the pending state (jsonrpc.ReadsPending) go first to A and
//     are not hedged: another endpoint has not seen the write yet and
//     answers the old pending nonce, which makes the wallet sign its next
//     transaction with the same nonce;
//   - lookups of the hash (EVM) or signature (Solana) the write answered
//     go first to the endpoint that took it, not hedged: another answers
//     null ("transaction not found").
//
// First, not only: a failover on error still happens (an answer, even a
// stale one, is better than an error), and an A that is not routable
// (drained, breaker open or half-open for a write, refusing, lagging,
// looking hung) leaves the normal order in place.
//
// The window is pool-wide: rpcdash does not know who sent what. The
// hashes are bounded (maxAffinityRefs, the oldest dropped first) and
// expire with the window. A request pays one atomic load while no write is
// in its window.
type writeAffinity struct {
	window time.Duration
	// last is the latest write's endpoint and window; nil before any.
	last atomic.Pointer[affinityHold]

	mu   sync.RWMutex
	refs map[string]affinityHold // hash or signature → the endpoint that took it
	// ring holds the refs in the order they came, with the seq of their
	// entry: a ref sent again gets a new place and a new seq, so its old
	// place, when it comes out of the ring, removes nothing.
	ring        [maxAffinityRefs]ringRef
	first, size int
	seq         uint64
}

// maxAffinityRefs bounds the hashes held: hostile or heavy write traffic
// drops the oldest, never grows the map.
const maxAffinityRefs = 4096

type affinityHold struct {
	ep    *endpoint
	until int64 // unix nanos
	seq   uint64
}

type ringRef struct {
	ref string
	seq uint64
}

func newWriteAffinity(window time.Duration) *writeAffinity {
	return &writeAffinity{window: window, refs: map[string]affinityHold{}}
}

// active is the latest write's hold while its window runs at now.
func (w *writeAffinity) active(now time.Time) *affinityHold {
	h := w.last.Load()
	if h == nil || now.UnixNano() >= h.until {
		return nil
	}
	return h
}

// note records that ep answered a write at now with ref (its result
// string: a transaction hash or signature; "" for none).
func (w *writeAffinity) note(ep *endpoint, ref string, now time.Time) {
	if w.window <= 0 {
		return
	}
	until := now.Add(w.window).UnixNano()
	w.last.Store(&affinityHold{ep: ep, until: until})
	if ref == "" || len(ref) > jsonrpc.MaxTxRef {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expire(now.UnixNano())
	if w.size == maxAffinityRefs {
		w.dropFirst()
	}
	w.seq++
	w.refs[ref] = affinityHold{ep: ep, until: until, seq: w.seq}
	w.ring[(w.first+w.size)%maxAffinityRefs] = ringRef{ref: ref, seq: w.seq}
	w.size++
}

// expire drops the refs whose window has passed: they came in order, and
// every window is as long, so they are the first ones.
func (w *writeAffinity) expire(now int64) {
	for w.size > 0 {
		r := w.ring[w.first]
		if h, ok := w.refs[r.ref]; ok && h.seq == r.seq && h.until > now {
			return
		}
		w.dropFirst()
	}
}

func (w *writeAffinity) dropFirst() {
	r := w.ring[w.first]
	if h, ok := w.refs[r.ref]; ok && h.seq == r.seq {
		delete(w.refs, r.ref)
	}
	w.ring[w.first] = ringRef{}
	w.first = (w.first + 1) % maxAffinityRefs
	w.size--
}

// lookup is the endpoint that took ref, while its window runs at now.
func (w *writeAffinity) lookup(ref string, now int64) *endpoint {
	w.mu.RLock()
	h, ok := w.refs[ref]
	w.mu.RUnlock()
	if !ok || now >= h.until {
		return nil
	}
	return h.ep
}

// held counts the refs whose window runs at now.
func (w *writeAffinity) held(now int64) int {
	w.mu.RLock()
	defer w.mu.RUnlock()
	n := 0
	for _, h := range w.refs {
		if now < h.until {
			n++
		}
	}
	return n
}

// affinityFor is the endpoint req should go to first because of a recent
// write (nil: none, route by score). start is when the request came.
func (e *Engine) affinityFor(req *jsonrpc.Request, cls jsonrpc.Class, start time.Time) *endpoint {
	h := e.affinity.active(start)
	if h == nil {
		return nil
	}
	switch cls {
	case jsonrpc.ClassWrite:
		return h.ep
	case jsonrpc.ClassRead:
		if e.methods.ReadsPending(req.Method, req.Params) {
			return h.ep
		}
		return e.txAffinity(req, start.UnixNano())
	}
	return nil
}

// readsOwnWrites says whether req, a read, depends on writes sent before
// it: it reads the pending state, or looks a transaction up by hash or
// signature (a client knows the hash of what it signed).
func (e *Engine) readsOwnWrites(req *jsonrpc.Request) bool {
	return e.methods.ReadsPending(req.Method, req.Params) ||
		e.methods.TxRefs(req.Method, req.Params, func(string) bool { return false })
}

// txAffinity is the endpoint that took the transactions req looks up,
// when every one of them was taken by the same endpoint within the window.
func (e *Engine) txAffinity(req *jsonrpc.Request, now int64) *endpoint {
	var ep *endpoint
	all := true
	if !e.methods.TxRefs(req.Method, req.Params, func(ref string) bool {
		got := e.affinity.lookup(ref, now)
		if got == nil || ep != nil && got != ep {
			all = false
			return false
		}
		ep = got
		return true
	}) || !all {
		return nil
	}
	return ep
}

// affinityPick is the endpoint a recent write holds a request to first
// (nil ep: none). firm: a batch's write after its first, which follows it
// whatever its pace, as the node would take the batch whole: it never
// yields (affinityYields).
type affinityPick struct {
	ep   *endpoint
	firm bool
}

type batchWriteBeforeKey struct{}

// withBatchWriteBefore marks ctx as a batch write's that follows the
// batch's first write (batchOrder).
func withBatchWriteBefore(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchWriteBeforeKey{}, true)
}

func followsBatchWrite(ctx context.Context) bool {
	v, _ := ctx.Value(batchWriteBeforeKey{}).(bool)
	return v
}

// affinityYieldMargin: a write leaves the endpoint the affinity holds it
// to for the normal order when that endpoint is slower than another
// routable one by more than this, and more than twice as slow. Every
// write would pay the difference for the whole window, which each write
// extends, so a pool whose first write met its slowest endpoint kept
// sending every write there (60 of 60 against an endpoint 750 ms slower);
// a move costs at most one stale pending read or one nonce gap on a
// provider that does not gossip, once. A slower endpoint within the
// margin (tens of ms) keeps the affinity: there the nonce order is worth
// more.
const affinityYieldMargin = 250 * time.Millisecond

// affinityYields says whether a write should leave ep, the endpoint the
// affinity holds it to, for the normal order: ep is measured, and either
// another routable endpoint in good standing is measured far faster
// (affinityYieldMargin), or no other is measured yet while ep is itself
// slower than the margin, so that the order tries another once.
func affinityYields(order []candidate, ep *endpoint) bool {
	margin := float64(affinityYieldMargin) / float64(time.Millisecond)
	mine, best := -1.0, -1.0
	unmeasured := false
	for _, c := range order {
		if c.tier != 0 || c.fallback || c.trial || c.standing() != 0 {
			continue
		}
		switch {
		case c.ep == ep:
			mine = c.fig.lat
		case c.fig.lat < 0:
			unmeasured = true
		case best < 0 || c.fig.lat < best:
			best = c.fig.lat
		}
	}
	switch {
	case mine < 0:
		return false
	case best >= 0:
		return mine-best > margin && mine > 2*best
	}
	return unmeasured && mine > margin
}

// noteWrite gives the write affinity a write's answer: a result from its
// endpoint (an error answer, or no answer, changes nothing).
func (e *Engine) noteWrite(req *jsonrpc.Request, res result) {
	if e.cfg.Router.WriteAffinity <= 0 || res.err != nil || res.ep == nil || res.info.HasError || !e.methods.SetsWriteAffinity(req.Method) {
		return
	}
	var ref string
	if res.body != nil && !req.IsNotification() {
		if s, ok := jsonrpc.ResultString(res.body.Bytes()); ok {
			ref = e.methods.TxRef(s)
		}
	}
	e.affinity.note(res.ep, ref, e.now())
}

// WriteAffinity is which endpoint recent writes hold (router.write_affinity):
// until Until, writes and the reads of the pending state go to it first.
type WriteAffinity struct {
	Endpoint string
	Until    time.Time
	Hashes   int // transaction hashes (signatures) mapped to their endpoint now
}

func (e *Engine) writeAffinityInfo(now time.Time) *WriteAffinity {
	h := e.affinity.active(now)
	if h == nil {
		return nil
	}
	return &WriteAffinity{Endpoint: h.ep.Name, Until: time.Unix(0, h.until).In(now.Location()), Hashes: e.affinity.held(now.UnixNano())}
}
