package engine

// An overdue upstream batch's late answer, taken for the calls that went
// alone beside it and have not been answered yet.

import (
	"context"
	"sync"
)

// lateAnswers lets an upstream batch that passed its own deadline on its
// last endpoint, and runs on beside its calls gone alone (sendWhole's
// overdue), answer those of them still unanswered when it answers, as a
// single read's attempt past its deadline still wins its race. Without
// it the batch's answer was only learnt from: every endpoint slowed to 4 s
// at once, a batch of 300 reads went alone at the deadline of the pool's
// 20 ms answers, a hundred at a time, and its last hundred met the
// request's 10 s deadline, where the one endpoint's batch had answered
// all 300 at 4 s (sent directly: 4 s, no error).
//
// Each call's answer is decided once: the batch's, offered before its own
// race ended (which it then stops as a lost race), or its own race's.
type lateAnswers struct {
	ctx context.Context // the client batch's: what a late answer is charged to (budgetOf)
	mu  sync.Mutex
	// By call, in the order sendWhole was given them; nil until armed.
	offered []*result                 // the batch's answer, while not yet taken or refused
	decided []bool                    // its answer is its own race's, or taken from offered
	stop    []context.CancelCauseFunc // its own race's, while it runs
}

// arm readies l for n calls: the batch went overdue and runs on.
func (l *lateAnswers) arm(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offered = make([]*result, n)
	l.decided = make([]bool, n)
	l.stop = make([]context.CancelCauseFunc, n)
}

// isArmed says whether the calls going alone may be answered by the batch.
func (l *lateAnswers) isArmed() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.offered != nil
}

// offer gives call k the batch's answer res; false when its own race has
// decided it already (the caller frees res). A race running is stopped as
// one lost to another attempt.
func (l *lateAnswers) offer(k int, res result) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.decided[k] || l.offered[k] != nil {
		return false
	}
	l.offered[k] = &res
	if stop := l.stop[k]; stop != nil {
		stop(errLost)
	}
	return true
}

// begin is called as call k's own race starts, with what stops it: the
// batch's answer when one was offered already (no race to run).
func (l *lateAnswers) begin(k int, stop context.CancelCauseFunc) (result, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if res := l.offered[k]; res != nil {
		l.decided[k] = true
		return *res, true
	}
	l.stop[k] = stop
	return result{}, false
}

// end is called as call k's own race ended with own: the answer call k
// gets. Its own answer when it has one, else the batch's when offered
// (charged to the client batch's answer budget, as a winner's is), else
// its own failure.
func (l *lateAnswers) end(k int, own result) result {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop[k] = nil
	l.decided[k] = true
	late := l.offered[k]
	if late == nil {
		return own
	}
	l.offered[k] = nil
	if own.err == nil && own.body != nil {
		putBuf(late.body)
		return own
	}
	if b := budgetOf(l.ctx); b != nil && !b.charge(int64(late.body.Len())) {
		putBuf(late.body)
		return own
	}
	putBuf(own.body)
	late.attempts, late.hedged = own.attempts, own.hedged
	return *late
}

// rescue offers each call of the overdue try that answered (end) the
// answer its own attempt would have been judged to give (takeElement),
// counts the answers taken as the endpoint's successes (as take does), and
// reports whether any was; won says which of r.calls were.
func (r *batchRace) rescue(end batchEnd) (won []bool) {
	e, ep := r.e, end.t.ep
	took := end.end.Sub(end.t.start)
	won = make([]bool, len(r.calls))
	success := newBatchSuccesses(ep)
	for j, c := range r.calls {
		res, _, ok := e.takeElement(ep, c, end.got[j], took)
		if !ok {
			if res.body != nil {
				putBuf(res.body)
			}
			continue
		}
		res.attempts = 0 // the call's batch sends are counted already (batchCall.sends)
		if !r.late.offer(r.pos[j], res) {
			putBuf(res.body)
			continue
		}
		won[j] = true
		success.add(c.p.method)
	}
	success.done()
	return won
}
