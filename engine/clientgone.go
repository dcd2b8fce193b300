package engine

import "context"

// cutAtShutdown is ctx cut, with a cause its answer names, when shutdown's
// deadline passes; stop releases it.
func (e *Engine) cutAtShutdown(ctx context.Context) (context.Context, func()) {
	ctx, cut := context.WithCancelCause(ctx)
	if e.hardStop.Err() != nil {
		// Made after the cut (a batch's write whose turn came with it):
		// AfterFunc would cut it only later, from its own goroutine, and
		// the write might leave meanwhile.
		cut(errShuttingDown)
	}
	unlink := context.AfterFunc(e.hardStop, func() { cut(errShuttingDown) })
	return ctx, func() { unlink(); cut(nil) }
}

// detachFromClient is a write's context: the request's deadline and
// shutdown still end it, its client's leaving does not. A write the client
// has handed over is sent, as it would have reached a node the client sent
// it to directly; cancelled before it left (a connection still being made)
// it would be lost without a word. Values (a batch's answer budget) carry over.
func (e *Engine) detachFromClient(ctx context.Context) (context.Context, func()) {
	d := context.WithoutCancel(ctx)
	cancel := context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		d, cancel = context.WithDeadline(d, dl)
	}
	d, stop := e.cutAtShutdown(d)
	return d, func() { stop(); cancel() }
}
