package engine

// Whether a request sent once (a write, a method in no table, a filter
// call) left for its endpoint, known for sure rather than guessed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// sendGate hands a request's body to its connection. A server cannot run
// a JSON-RPC request whose body it never received, so a request whose body
// never began to be written provably did not run, and one abandoned before
// that never will: its body then refuses to be read, and the transport
// gives up on it.
//
// bounded: the request may go to another endpoint, so it waits for a
// connection only up to connectBound; the last candidate waits as long as
// the dial and the request's deadline let it, as a direct client would.
type sendGate struct {
	state   atomic.Int32
	bounded bool
}

const (
	gateWaiting int32 = iota
	gateSending
	gateAbandoned
)

// abandon keeps a request that has not begun to be written from ever
// being; false when it already has.
func (g *sendGate) abandon() bool {
	return g.state.CompareAndSwap(gateWaiting, gateAbandoned) || g.state.Load() == gateAbandoned
}

func (g *sendGate) abandoned() bool { return g.state.Load() == gateAbandoned }

var errAbandoned = errors.New("request abandoned before it was sent")

// gatedBody is a request body read only through its gate.
type gatedBody struct {
	gate *sendGate
	r    *bytes.Reader
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.gate.state.CompareAndSwap(gateWaiting, gateSending) && b.gate.abandoned() {
		return 0, errAbandoned
	}
	return b.r.Read(p)
}

func (b *gatedBody) Close() error { return nil }

type sendGateKey struct{}

// withSendGate has the request sent under ctx go through g, so that its
// sender can ask whether it left (executor's attempts, leftTo).
func withSendGate(ctx context.Context, g *sendGate) context.Context {
	return context.WithValue(ctx, sendGateKey{}, g)
}

func sendGateOf(ctx context.Context) *sendGate {
	g, _ := ctx.Value(sendGateKey{}).(*sendGate)
	return g
}

// errNoConnection: a request sent once got no connection within
// connectBound and was abandoned unsent.
type errNoConnection struct{ bound time.Duration }

func (e errNoConnection) Error() string {
	return fmt.Sprintf("no connection within %s (unreachable): not sent", e.bound.Round(time.Millisecond))
}

// connectBound is how long a request sent once waits for a connection to
// take its body (dial, TLS, a proxy) before giving up on the endpoint,
// having provably sent nothing, so that it may go to the next one. The
// dial's own dialTimeout (5 s) is longer than many a write's whole
// deadline: a write to an endpoint that drops connection attempts was
// lost at a 2 s deadline, and took 5 s to fail over at 10 s. It is the
// endpoint's attempt deadline (how long its answers may take), at least
// minConnectBound, at most half the time the request has left and
// dialTimeout. ok is false when the request's gate is not bounded.
func (e *Engine) connectBound(ctx context.Context, ep *endpoint) (d time.Duration, ok bool) {
	if g := sendGateOf(ctx); g == nil || !g.bounded {
		return dialTimeout, false
	}
	own, _ := e.endpointDeadline(ep)
	d = min(max(own, minConnectBound), dialTimeout)
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return d, true
}

// minConnectBound is the least connectBound: a lost SYN is sent again
// after a second, and TLS follows its answer. At one second, a write after
// the idle connections closed, on a connection that took 1.3 s (a slow
// proxy, one lost SYN), was given up on, cost a second more, and charged
// its healthy endpoint with a failure.
const minConnectBound = 2 * time.Second

// gated returns ctx with a send gate: the one already in it (an
// execution's attempt's), else a new bounded one (an upstream batch's,
// whose calls run alone after it when no other endpoint takes it).
func gated(ctx context.Context) (context.Context, *sendGate) {
	if g := sendGateOf(ctx); g != nil {
		return ctx, g
	}
	g := &sendGate{bounded: true}
	return withSendGate(ctx, g), g
}

// cancelOnClose ends a request's own context once its answer is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel(nil)
	return err
}
