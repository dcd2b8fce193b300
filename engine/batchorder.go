package engine

import "github.com/rpcdash/rpcdash/engine/internal/jsonrpc"

// batchOrder keeps, within one batch, the order of a node that runs the
// batch one call after another where the order shows, and no more: running
// a batch of 1000 writes one after another over a network round trip each
// would take a provider's time 1000 times over (a node runs them in
// microseconds each), past server.request_timeout.
//   - A write after the batch's first write starts when that one has ended,
//     so that write affinity sends it to the same endpoint: writes spread
//     over endpoints that do not gossip leave each a nonce gap. The later
//     writes then run at once; a node holds a transaction whose nonce comes
//     early until the one before it arrives.
//   - A read that must see the writes (readsOwnWrites) starts when every
//     write before it in the batch has ended.
//   - Any other element starts at once.
type batchOrder struct {
	// first is closed when the batch's first write that sets the affinity
	// (a method of the write tables) has ended; nil before one. Methods in
	// no table are sent once like writes but set no affinity: waiting for
	// one would gain nothing, and a batch of reads rpcdash does not know
	// (an L2's own methods) would pay a round trip for it.
	first chan struct{}
	// writes are closed as each write of the batch so far ends.
	writes []chan struct{}
}

// admit says what req, the batch's next element, waits for before it
// starts, and the channel to close when it ends (nil: req is no write).
func (o *batchOrder) admit(e *Engine, req *jsonrpc.Request) (after []chan struct{}, done chan struct{}) {
	cls := e.methods.Class(req.Method)
	if cls == jsonrpc.ClassWrite {
		if o.first != nil {
			after = []chan struct{}{o.first}
		}
		done = make(chan struct{})
		o.writes = append(o.writes, done)
		if o.first == nil && e.methods.SetsWriteAffinity(req.Method) {
			o.first = done
		}
		return after, done
	}
	if len(o.writes) > 0 && cls == jsonrpc.ClassRead && e.readsOwnWrites(req) {
		after = o.writes[:len(o.writes):len(o.writes)]
	}
	return after, nil
}
