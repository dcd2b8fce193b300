package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// batchOrder keeps, within one batch, the order of a node that runs the
// batch one call after another where the order shows, and no more: running
// a batch of 1000 writes one after another over a network round trip each
// would take a provider's time 1000 times over (a node runs them in
// microseconds each), past server.request_timeout.
//   - A write after the batch's first write starts when that one has ended,
//     so that write affinity sends it to the same endpoint: writes spread
//     over endpoints that do not gossip leave each a nonce gap. The later
//     writes then run at once (on an EVM chain as upstream batches sent
//     once, batchonce.go); a node holds a transaction whose nonce comes
//     early until the one before it arrives.
//   - A read that must see the writes (readsOwnWrites) starts when every
//     write before it in the batch has ended.
//   - A call of a filter (eth_getFilterChanges, eth_getFilterLogs,
//     eth_uninstallFilter) starts when the batch's previous call of the same
//     filter has ended: run at once, an uninstall reached the node before
//     the poll in front of it, whose changes were lost. Calls of different
//     filters do not wait for each other (viem polls every filter it
//     watches in one batch), nor does a filter's creation, which no call of
//     the same batch can name. A stateful method of no filter role (one
//     methods.stateful adds) keeps its place among all the batch's stateful
//     calls: what state it touches is unknown.
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
	// filters holds, for each filter id the batch has named so far, the
	// channel closed when its latest call ends.
	filters map[string]chan struct{}
	// barrier is closed when the latest stateful call of no filter role
	// has ended, and sinceBarrier as each filter call after it ends: the
	// next such call waits for them all (each of which waited for the
	// barrier before it).
	barrier      chan struct{}
	sinceBarrier []chan struct{}
}

// Why an element waits, for the answer of one never sent because what it
// waited for had not ended by its deadline.
const (
	waitFirstWrite = "the batch's first write"
	waitWrites     = "the batch's earlier writes"
	waitFilter     = "the batch's earlier call of the same filter"
	waitStateful   = "the batch's earlier stateful calls"
)

// admit says what req, the batch's next element, waits for before it
// starts and why, and the channel to close when it ends (nil: nothing
// waits for it).
func (o *batchOrder) admit(e *Engine, req *jsonrpc.Request) (after []chan struct{}, why string, done chan struct{}) {
	switch cls := e.methods.Class(req.Method); cls {
	case jsonrpc.ClassWrite:
		if o.first != nil {
			after, why = []chan struct{}{o.first}, waitFirstWrite
		}
		done = make(chan struct{})
		o.writes = append(o.writes, done)
		if o.first == nil && e.methods.SetsWriteAffinity(req.Method) {
			o.first = done
		}
		return after, why, done
	case jsonrpc.ClassStateful:
		return o.admitStateful(e, req)
	}
	if len(o.writes) > 0 && e.readsOwnWrites(req) {
		after, why = o.writes[:len(o.writes):len(o.writes)], waitWrites
	}
	return after, why, nil
}

// admitStateful orders a stateful call: a filter's calls one after another,
// and a call of unknown state (no filter role) after every stateful call
// before it and before every one after it.
func (o *batchOrder) admitStateful(e *Engine, req *jsonrpc.Request) (after []chan struct{}, why string, done chan struct{}) {
	creates, idParam, unsupported := e.methods.FilterRole(req.Method)
	if unsupported {
		return nil, "", nil // refused without asking an endpoint
	}
	if !creates && idParam < 0 {
		after = o.sinceBarrier[:len(o.sinceBarrier):len(o.sinceBarrier)]
		if o.barrier != nil {
			after = append(after, o.barrier)
		}
		done = make(chan struct{})
		o.barrier, o.sinceBarrier = done, nil
		return after, waitStateful, done
	}
	var id string
	if !creates {
		var ok bool
		if id, ok = jsonrpc.StringParam(req.Params, idParam); !ok {
			return nil, "", nil // refused as invalid params, asking no endpoint
		}
	}
	done = make(chan struct{})
	if o.barrier != nil {
		after, why = append(after, o.barrier), waitStateful
	}
	if !creates {
		// A creation is new state: no call of the batch can name it.
		if prev := o.filters[id]; prev != nil {
			after, why = append(after, prev), waitFilter
		}
		if o.filters == nil {
			o.filters = map[string]chan struct{}{}
		}
		o.filters[id] = done
	}
	o.sinceBarrier = append(o.sinceBarrier, done)
	return after, why, done
}

// awaitTurn waits until the elements req follows in its batch (admit) have
// ended. ok is false when req's turn never came: its deadline passed, or
// shutdown or the batch's answer bound cut it; turn is then the context
// that ended. A write whose client went away still waits for its turn and
// is sent, as serveOne sends a write the client has handed over
// (detachFromClient). stop releases turn.
func (e *Engine) awaitTurn(ctx context.Context, req *jsonrpc.Request, after []chan struct{}) (turn context.Context, ok bool, stop func()) {
	turn, stop = ctx, func() {}
	write := e.methods.Class(req.Method) == jsonrpc.ClassWrite
	ended := func() bool {
		if ctxErr(turn) == nil && e.hardStop.Err() == nil {
			return false
		}
		if write && turn == ctx && errors.Is(context.Cause(ctx), context.Canceled) {
			turn, stop = e.detachFromClient(ctx)
			return ctxErr(turn) != nil || e.hardStop.Err() != nil
		}
		return true
	}
	for _, w := range after {
		select {
		case <-w:
			continue
		case <-turn.Done():
		}
		if ended() {
			return turn, false, stop
		}
		select { // a write, detached from its client now
		case <-w:
		case <-turn.Done():
			return turn, false, stop
		}
	}
	// Cut as its turn came: not sent either. The element it waited for
	// may have ended at their common deadline, or at shutdown's cut,
	// before turn's own timer or cut has come: what is past either is not
	// sent.
	return turn, !ended(), stop
}

// ctxErr is ctx.Err(), or DeadlineExceeded once ctx's deadline has passed
// even if its timer has not fired yet.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// notSent answers a batch element whose turn never came (awaitTurn), cut by
// ctx: it was never sent, so it is safe to send again whatever its class,
// and its trace shows no attempt. why is what it waited for (admit).
func (e *Engine) notSent(ctx context.Context, req *jsonrpc.Request, why string, start time.Time, tr traceRef) result {
	cls := e.methods.Class(req.Method)
	tr.setMethod(req.Method, cls)
	mc := e.acct.method(e.names.statsName(req.Method))
	msg := "not sent: the request was cut while it waited for " + why
	if errors.Is(ctxErr(ctx), context.DeadlineExceeded) {
		msg = fmt.Sprintf("not sent: it waited for %s, which had not answered by its deadline (%s); it is safe to send again",
			why, e.timeoutWords(req.Method))
	}
	res := result{class: cls, err: &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: msg}}
	if e.hardStop.Err() != nil {
		res.err = shuttingDownError(res) // ctx may not be cut yet (awaitTurn)
	} else {
		res.err = answerError(ctx, res)
	}
	res.out = outcomeOf(ctx, res)
	mc.ended(res.out)
	took := e.now().Sub(start)
	e.countRequests(mc.name, cls, res.out, took, 1)
	tr.finish(took, res, res.err.Code)
	return res
}
