package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/window"
)

// A shadow ([[endpoints]] role = "shadow") is the seed's first step of a
// cutover: mirror requests to the new endpoint and compare its answers with
// the current ones before it takes any traffic. A shadow never answers a
// client: it is never a first attempt, hedge, failover or panic target and
// counts in none of the pool's figures (routable, ready, standby, open cap,
// slowdown); probes probe it like any endpoint.
//
// For share of the client reads (never writes, filters or methods sent
// once), once the client's answer has been written and flushed, the same request goes
// to the shadow off the client's path, and its result is compared with the
// answer the client got (compare.go). Mirrors answer
// nobody, so nothing of theirs reaches a client or a breaker: they take no
// part in routing; a shadow that answers HTTP 429 backs off like any
// endpoint, and gets no mirrors until its back-off ends. At most
// maxMirrors are in flight pool-wide; beyond that
// a mirror is dropped and counted. Each has the request's own timeout
// (server.request_timeout) and is cancelled at shutdown; none starts once
// shutdown has begun. They are not
// charged to the hedge budget; mirrored counts what they cost.

// maxMirrors bounds the mirrors in flight, pool-wide.
const maxMirrors = 64

// shadowEventEvery rate-limits mismatch events, per shadow and method.
const shadowEventEvery = 10 * time.Second

// Comparison outcomes (rpcdash_shadow_compared_total's outcome label).
const (
	shadowMatch    = "match"
	shadowMismatch = "mismatch"
	shadowTip      = "tip"
	shadowError    = "error"
	shadowDropped  = "dropped"
)

type shadowStats struct {
	mu                                            sync.Mutex
	mirrored, match, mismatch, tip, errs, dropped int64
	latency, primary                              *window.Latency // the shadow's answers; the client's answering attempts
	lastMethod                                    string
	lastAt                                        time.Time
	told                                          map[string]time.Time // last mismatch event per method
}

func newShadowStats(e *Engine) *shadowStats {
	return &shadowStats{
		latency: window.NewLatency(e.cfg.Server.StatsWindow, window.DefaultBuckets, e.now),
		primary: window.NewLatency(e.cfg.Server.StatsWindow, window.DefaultBuckets, e.now),
	}
}

// ShadowSnapshot is a shadow's comparison figures since start.
type ShadowSnapshot struct {
	Mirrored int64 // sent
	Compared int64 // match + mismatch + tip + errors
	Match    int64
	Mismatch int64
	Tip      int64 // differed on a read of a moving block: expected near the tip
	Errors   int64 // one side a result, the other an error or failure
	Dropped  int64 // over the in-flight bound, or cut by shutdown
	// MatchRate is Match ÷ (Match + Mismatch + Errors); tip outcomes do
	// not count against the shadow. 0 before any such comparison.
	MatchRate float64
	// P50/P95: the shadow's latency on mirrors; PrimaryP50/95: the
	// answering attempts' latency for the same requests (rolling window).
	P50, P95               time.Duration
	PrimaryP50, PrimaryP95 time.Duration
	Answered               int64 // the mirrors those percentiles are of
	LastMismatch           *ShadowMismatch
}

// ShadowMismatch is when the shadow last differed, and on what method
// (no params or results are kept).
type ShadowMismatch struct {
	Method string
	At     time.Time
}

func (s *shadowStats) snapshot() *ShadowSnapshot {
	s.mu.Lock()
	out := &ShadowSnapshot{Mirrored: s.mirrored, Match: s.match, Mismatch: s.mismatch, Tip: s.tip, Errors: s.errs, Dropped: s.dropped}
	if s.lastMethod != "" {
		out.LastMismatch = &ShadowMismatch{Method: s.lastMethod, At: s.lastAt}
	}
	s.mu.Unlock()
	out.Compared = out.Match + out.Mismatch + out.Tip + out.Errors
	if n := out.Match + out.Mismatch + out.Errors; n > 0 {
		out.MatchRate = float64(out.Match) / float64(n)
	}
	l, p := s.latency.Summary(), s.primary.Summary()
	out.P50, out.P95, out.PrimaryP50, out.PrimaryP95, out.Answered = l.P50, l.P95, p.P50, p.P95, l.Count
	return out
}

// mirrorJob is what a read leaves for its shadows: the request as sent
// upstream and what the client was answered.
type mirrorJob struct {
	req     *jsonrpc.Request
	method  string // the stats name
	moving  bool   // reads a moving block (MovingBlock)
	took    time.Duration
	answer  *endpoint
	targets []*endpoint
}

// planMirror picks the shadows this read goes to (each by its share); nil
// when none. The client's answer is not known yet: the mirrors are sent
// once it has been written (release).
func (e *Engine) planMirror(req *jsonrpc.Request, p plan, res result) *mirrorJob {
	if e.shadows.Load() == 0 || p.class != jsonrpc.ClassRead || p.pinned != nil || res.err != nil || res.ep == nil || res.body == nil || req.IsNotification() {
		return nil
	}
	var job *mirrorJob
	var now time.Time // read once, and only for a shadow the draw picked
	for _, ep := range e.endpoints {
		rs := ep.roleState()
		if rs.role != RoleShadow || ep == res.ep || ep.drained.Load() || e.rand() >= rs.share {
			continue
		}
		if now.IsZero() {
			now = e.now()
		}
		if off, _ := ep.backedOff(now); off {
			continue // it asked for less traffic (HTTP 429): mirrors wait too
		}
		if job == nil {
			job = &mirrorJob{req: req, method: p.method, moving: e.methods.MovingBlock(req.Method, req.Params), took: res.took, answer: res.ep}
		}
		job.targets = append(job.targets, ep)
	}
	return job
}

// release is the end of a request's answer: its body goes back to the pool,
// or first to the mirrors that compare with it. It runs once the answer
// has been written and flushed, so a mirror never delays a client. Once
// the engine is stopping no mirror starts (each is counted dropped).
func (e *Engine) release(res result) {
	job, body := res.mirror, res.body // res itself is not captured: it would be moved to the heap for every answer
	if job == nil {
		putBuf(body)
		return
	}
	var sent []*endpoint
	for _, ep := range job.targets {
		if e.mirrors.Add(1) > maxMirrors {
			e.mirrors.Add(-1)
			e.noteShadow(ep, job, shadowDropped, 0)
			continue
		}
		sent = append(sent, ep)
	}
	// None starts once shutdown has begun (track: added to e.wg before
	// Shutdown waits for it, or not at all).
	if e.stopping.Err() != nil || !e.track(len(sent)) {
		for _, ep := range sent {
			e.mirrors.Add(-1)
			e.noteShadow(ep, job, shadowDropped, 0)
		}
		sent = nil
	}
	if len(sent) == 0 {
		putBuf(body)
		return
	}
	// The answer is shared by the mirrors; the last one returns it.
	var left atomic.Int32
	left.Store(int32(len(sent)))
	client := newClientAnswer(body.Bytes())
	for _, ep := range sent {
		ep.shadow.mu.Lock()
		ep.shadow.mirrored++
		ep.shadow.mu.Unlock()
		go func() {
			defer e.wg.Done()
			defer e.mirrors.Add(-1)
			e.runMirror(ep, job, client)
			if left.Add(-1) == 0 {
				putBuf(body)
			}
		}()
	}
}

// runMirror sends one mirror and compares its answer with the client's.
func (e *Engine) runMirror(ep *endpoint, job *mirrorJob, client *clientAnswer) {
	ctx, cancel := context.WithTimeout(e.base, e.requestTimeout(job.req.Method))
	defer cancel()
	start := e.now()
	rep := e.roundTrip(ctx, ep, job.req, true) // mirrors are reads
	end := e.now()
	took := end.Sub(start)
	defer putBuf(rep.body)
	if rep.out == outCancelled || errors.Is(context.Cause(ctx), errShutdown) {
		e.noteShadow(ep, job, shadowDropped, 0)
		return
	}
	if rep.out == outRateLimit {
		b := e.cfg.Breaker
		ep.backOffWhole(end, rep.retryAfter, b.BackoffBase, b.BackoffMax)
	}
	var shadow []byte
	if rep.body != nil && (rep.out == outAnswer || rep.out.errorAnswer()) {
		shadow = rep.body.Bytes()
	}
	outcome := compareAnswers(client, shadow, job.moving)
	if (outcome == shadowMismatch || outcome == shadowError) && shadow != nil {
		c, okC := client.decoded()
		s, okS := decodeAnswer(shadow)
		if okC && okS && e.notThereYet(ep, job, c, s) {
			outcome = shadowTip // notyet.go
		}
	}
	if shadow == nil {
		took = 0 // no JSON-RPC answer: a failure's time is not the shadow's latency
	}
	e.noteShadow(ep, job, outcome, took)
}

// noteShadow counts one outcome; took is the shadow's latency when it gave
// a JSON-RPC answer (0: nothing recorded, on either side).
func (e *Engine) noteShadow(ep *endpoint, job *mirrorJob, outcome string, took time.Duration) {
	s := ep.shadow
	now := e.now()
	tell := false
	s.mu.Lock()
	switch outcome {
	case shadowMatch:
		s.match++
	case shadowMismatch:
		s.mismatch++
		s.lastMethod, s.lastAt = job.method, now
		if s.told == nil || len(s.told) > maxTrackedMethods {
			s.told = map[string]time.Time{}
		}
		if last, ok := s.told[job.method]; !ok || now.Sub(last) >= shadowEventEvery {
			s.told[job.method] = now
			tell = true
		}
	case shadowTip:
		s.tip++
	case shadowError:
		s.errs++
	case shadowDropped:
		s.dropped++
	}
	s.mu.Unlock()
	if outcome != shadowDropped && took > 0 {
		s.latency.Record(took)
		s.primary.Record(job.took)
	}
	e.metrics.shadow(ep.Name, outcome)
	if tell {
		e.events.add(Event{Type: EventShadow, Endpoint: ep.Name, From: job.answer.Name, To: ep.Name,
			Message: fmt.Sprintf("shadow %s answered %s differently from %s (further mismatches of %s within %s are counted, not logged)",
				ep.Name, job.method, job.answer.Name, job.method, shadowEventEvery)})
	}
}
