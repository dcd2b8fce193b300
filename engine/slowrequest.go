package engine

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// At a cap (server.max_conns, server.max_inflight), the request arriving
// the slowest makes room for a new one, as Apache's mod_reqtimeout cuts a
// request arriving below its MinRate: clients that kept opening
// connections and sent each request's header or body at 1 byte/s held
// every slot for server.read_timeout, and 74-89 % of new clients were
// refused while they did. A request is slow when it has arrived at less
// than minArrivalPace since it began, counting one byte at its start so
// that a connection just opened, which has sent nothing yet, is not slow
// for that (it is after 1/minArrivalPace, 2 ms, then only behind every
// slower one). Only a request still arriving is ever taken: its header, or
// a body its handler is waiting on. A request read whole is in flight and
// never is, however slowly it came; neither is one whose handler answers
// without reading its body.
//
// The slowest is taken rather than the oldest: an upload arriving at a
// healthy pace for a while is older than a trickle begun a moment ago, and
// it would have gone first. A rate has to be paid for in bytes: holding a
// slot from being taken costs minArrivalPace for as long as it is held,
// where 1 byte/s held it before.
const minArrivalPace = 500 // bytes a second: mod_reqtimeout's default MinRate

// requestStage is where a connection's current request is.
type requestStage int32

const (
	stageHeader  requestStage = iota // its header is arriving
	stageServing                     // its header is in, the handler has it and waits on no body
	stageBody                        // the handler waits on its body
	stageIdle                        // between two requests
)

// requestProgress follows the request arriving on a limitedConn.
type requestProgress struct {
	stage        atomic.Int32
	began        atomic.Int64 // unix ns on the listener's clock
	bytesAtBegin atomic.Uint64
	bytes        atomic.Uint64 // every byte read from the connection
	// admitted: the request holds a server.max_inflight admission
	// (serveRPC); only such a one gives its place at that cap.
	admitted atomic.Bool
}

// beginRequest notes a request whose first byte comes after the
// connection's bytes so far: on a new connection, from its accept; on a
// keep-alive one, from its next request's first bytes (limitedConn.Read).
func (c *limitedConn) beginRequest(now time.Time, bytesSoFar uint64) {
	// The stage last: evictSlowest reads it first, and then sees when
	// the request began.
	c.progress.began.Store(now.UnixNano())
	c.progress.bytesAtBegin.Store(bytesSoFar)
	c.progress.stage.Store(int32(stageHeader))
}

// noteStage follows net/http's view of the connection: its header is in
// once the connection is active.
func (c *limitedConn) noteStage(state http.ConnState) {
	switch state {
	case http.StateActive:
		c.progress.stage.Store(int32(stageServing))
	case http.StateIdle, http.StateHijacked, http.StateClosed:
		c.progress.stage.Store(int32(stageIdle))
	}
}

// arrivalPace is the bytes a second the connection's request has come at
// since it began, one counted at its start, and its stage.
func (c *limitedConn) arrivalPace(now time.Time) (float64, requestStage) {
	stage := requestStage(c.progress.stage.Load())
	age := now.Sub(time.Unix(0, c.progress.began.Load())).Seconds()
	got := c.progress.bytes.Load() - c.progress.bytesAtBegin.Load()
	if age <= 0 {
		return minArrivalPace, stage // just begun: not slow
	}
	return float64(got+1) / age, stage
}

// evictSlowest closes the connection whose request is arriving the
// slowest below minArrivalPace, freeing its slot; false when none is.
// bodiesAdmitted limits it to requests past server.max_inflight's
// admission, waiting on their bodies.
func (l *connLimitListener) evictSlowest(bodiesAdmitted bool) bool {
	now := l.now()
	l.mu.Lock()
	var slowest *limitedConn
	slowestPace := float64(minArrivalPace)
	for lc := range l.open {
		pace, stage := lc.arrivalPace(now)
		arriving := stage == stageBody || stage == stageHeader && !bodiesAdmitted
		if !arriving || bodiesAdmitted && !lc.progress.admitted.Load() || pace >= slowestPace {
			continue
		}
		slowest, slowestPace = lc, pace
	}
	if slowest != nil {
		// Out of the set before it is closed: another cap's eviction
		// must not count it as the room it makes too.
		delete(l.open, slowest)
	}
	l.mu.Unlock()
	if slowest == nil {
		return false
	}
	slowest.Close()
	return true
}

// makeRoomAtInflight closes the connection of the admitted request whose
// body is arriving the slowest, on c's port, for a request past
// server.max_inflight; false when there is none (or c is not a limited
// connection: a test's recorder).
func (c *limitedConn) makeRoomAtInflight() bool {
	return c != nil && c.owner.evictSlowest(true)
}

// holdsAdmission marks whether c's request holds a server.max_inflight
// admission (only such a one gives its place at that cap).
func (c *limitedConn) holdsAdmission(held bool) {
	if c != nil {
		c.progress.admitted.Store(held)
	}
}

// bodyRead marks c's request read whole, in flight from here on, once
// the handler has its body: a decoder need not read on to the body's EOF,
// which arrivingBody waits for.
func (c *limitedConn) bodyRead() {
	if c != nil {
		c.progress.stage.CompareAndSwap(int32(stageBody), int32(stageServing))
	}
}

// connKey is the request context's key for its limitedConn.
type connKey struct{}

// withConn is http.Server's ConnContext: it lets a handler find its
// connection's progress.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// requestConn is r's limitedConn, nil when it has none.
func requestConn(r *http.Request) *limitedConn {
	lc, _ := r.Context().Value(connKey{}).(*limitedConn)
	return lc
}

// followBodies marks a request as waiting on its body while its handler
// reads it, until the body's end: only then may it be taken to make room.
func followBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc := requestConn(r); lc != nil && r.Body != nil && r.Body != http.NoBody {
			r.Body = &arrivingBody{ReadCloser: r.Body, progress: &lc.progress}
		}
		h.ServeHTTP(w, r)
	})
}

// arrivingBody is a request body whose reads mark its connection's stage.
type arrivingBody struct {
	io.ReadCloser
	progress *requestProgress
	whole    bool
}

func (b *arrivingBody) Read(p []byte) (int, error) {
	if b.whole {
		return b.ReadCloser.Read(p)
	}
	b.progress.stage.CompareAndSwap(int32(stageServing), int32(stageBody))
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		// Read whole: in flight from here on, never taken.
		b.whole = true
		b.progress.stage.CompareAndSwap(int32(stageBody), int32(stageServing))
	}
	return n, err
}
