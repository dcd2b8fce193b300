package engine

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// The request traces: a ring of the last server.trace_requests client
// requests (each element of a batch is one), each with its attempts in the
// order they were sent — endpoint, role, when it started and ended, how it
// ended, whether it won, and for a cancelled loser when it was cancelled and
// how long it took to let go. A trace holds no params, no result, no URL:
// endpoint names, outcome classes, HTTP statuses and JSON-RPC error codes,
// and only the transport's own error texts (a connection's failure), which
// are scrubbed of endpoint URLs and bounded where they are made.
//
// The ring's slots are allocated once; a request takes the slot of its id
// (id mod size), evicting the request size ids older, and writes into it
// under the slot's own lock, so requests rarely meet on one. A loser that
// ends after its request was answered still finds its slot by id; if the
// slot has been taken since, its ending is dropped.

// maxTraceRequests is the largest server.trace_requests: about 450 bytes a
// slot, 45 MB at most.
const maxTraceRequests = 100_000

// traceInline attempts live in the slot itself: a primary, a hedge and two
// failovers need no allocation.
const traceInline = 4

// traceMethodBytes caps the method name a trace keeps (copied into the
// slot: the request's own string aliases its body).
const traceMethodBytes = 64

type traceRing struct {
	slots []traceSlot
	seq   atomic.Uint64 // the last id given
	// maxAttempts is the most attempts one request can send: one per
	// endpoint, plus hedge.max_extra hedges sent again to an endpoint
	// already working on it (relaunch).
	maxAttempts int
}

type traceSlot struct {
	mu sync.Mutex
	r  requestTrace
}

// traceRef is a request's handle on its slot; the zero value traces nothing.
type traceRef struct {
	s  *traceSlot
	id uint64
}

// requestTrace is one slot's record, all values: copied out under the lock.
type requestTrace struct {
	id        uint64
	method    [traceMethodBytes]byte
	methodLen uint8
	methodCut bool
	class     int8 // jsonrpc.Class, -1 = none (the request never had a method)
	start     time.Time
	done      bool
	latency   time.Duration
	outcome   traceOutcome
	code      int // the error's code (rpc_error, error)
	hedged    bool
	n         int // attempts recorded
	omitted   int // attempts past maxAttempts (none expected)
	inline    [traceInline]attemptTrace
	more      []attemptTrace // past the inline ones, reused by the slot

	// hedgeDelay is the hedge delay in force when the request's hedge timer
	// was armed (hedgeArmed; not armed: the request is not hedged), refused
	// why the last hedge that fell due was not sent then.
	hedgeDelay time.Duration
	hedgeArmed bool
	refused    hedgeRefusal
}

type traceOutcome uint8

const (
	traceInFlight traceOutcome = iota
	traceAnswered              // a result (or an empty answer to a notification)
	traceRPCError              // an endpoint's JSON-RPC error answer, relayed
	traceError                 // rpcdash's own error answer
	traceGone                  // unanswered: its client went away first
)

func (o traceOutcome) String() string {
	return [...]string{"in_flight", "answered", "rpc_error", "error", "client_gone"}[o]
}

type attemptTrace struct {
	ep      *endpoint
	role    role
	start   time.Duration // from the request's start
	end     time.Duration
	cancel  time.Duration // when the request let go of it (0 = never)
	ended   bool
	out     outcome
	refused bool
	status  int // HTTP status, 0 when none was read
	rpcCode int // the JSON-RPC error code of an error answer
	cause   string
	won     bool
	overdue bool
	why     cancelWhy
}

// cancelWhy is why rpcdash cut an attempt, or let go of it.
type cancelWhy uint8

const (
	cancelNone        cancelWhy = iota
	cancelAnotherWon            // another attempt's answer was relayed
	cancelRequestDone           // the request ended (failed or relayed an error) without it
	cancelRequestCut            // the client went away, or the request's deadline or shutdown cut it
	cancelKeptRunning           // let go but left running: a half-open trial or a tail sample
)

func (c cancelWhy) String() string {
	return [...]string{"", "another_won", "request_done", "request_cut", "kept_running"}[c]
}

// hedgeRefusal is why a hedge that fell due was not sent (a trace's
// hedge_refused).
type hedgeRefusal uint8

const (
	hedgeSent          hedgeRefusal = iota
	refusedBudget                   // the hedge budget had not the method's weight
	refusedOutstanding              // hedge.max_outstanding of the method's hedges were in flight
	refusedPaused                   // the saturation guard: hedge.max_inflight or hedge.pause_error_rate
	refusedQueue                    // the queue guard: most endpoints queue, a duplicate would join a queue
	refusedLate                     // the timer fired too late (rpcdash stalled): it looks again a delay later
	refusedRateLimited              // an attempt was answered 429: never hedged
	refusedNoEndpoint               // no endpoint to send it to (hedge.same_domain, every candidate used or refusing)
	refusedUntracked                // a method past the first maxTrackedMethods names, never hedged
	hedgeRefusals                   // how many values there are
)

func (h hedgeRefusal) String() string {
	return [...]string{"", "budget", "max_outstanding", "paused", "queue", "late", "rate_limited", "no_endpoint", "untracked"}[h]
}

// newTraceRing is nil when size is 0 (tracing off).
func newTraceRing(size, maxAttempts int) *traceRing {
	if size <= 0 {
		return nil
	}
	return &traceRing{slots: make([]traceSlot, size), maxAttempts: max(maxAttempts, 1)}
}

// reserve takes n consecutive ids (a batch's elements) and returns the
// first.
func (t *traceRing) reserve(n int) uint64 {
	return t.seq.Add(uint64(n)) - uint64(n) + 1
}

// begin opens the trace of request id, evicting the one its slot held.
func (t *traceRing) begin(id uint64, start time.Time) traceRef {
	s := &t.slots[id%uint64(len(t.slots))]
	s.mu.Lock()
	more := s.r.more[:0]
	s.r = requestTrace{id: id, start: start, class: -1, more: more}
	s.mu.Unlock()
	return traceRef{s: s, id: id}
}

// lock returns the slot's record locked, or nil (unlocked) when the slot
// holds another request now.
func (r traceRef) lock() *requestTrace {
	if r.s == nil {
		return nil
	}
	r.s.mu.Lock()
	if r.s.r.id != r.id {
		r.s.mu.Unlock()
		return nil
	}
	return &r.s.r
}

func (r traceRef) unlock() { r.s.mu.Unlock() }

func (r traceRef) setMethod(method string, cls jsonrpc.Class) {
	tr := r.lock()
	if tr == nil {
		return
	}
	tr.methodLen = uint8(copy(tr.method[:], method))
	tr.methodCut = len(method) > traceMethodBytes
	tr.class = int8(cls)
	r.unlock()
}

// finish records how the request was answered.
func (r traceRef) finish(took time.Duration, res result, errCode int) {
	tr := r.lock()
	if tr == nil {
		return
	}
	tr.done, tr.latency, tr.hedged = true, took, res.hedged
	switch {
	case res.out == clientGone: // the error it ended with reached no one
		tr.outcome, tr.code = traceGone, errCode
	case errCode != 0:
		tr.outcome, tr.code = traceError, errCode
	case res.info.HasError:
		tr.outcome, tr.code = traceRPCError, res.info.ErrCode
	default:
		tr.outcome = traceAnswered
	}
	r.unlock()
}

// refuse records a request answered with rpcdash's error before it was
// run (no method, or its element was invalid).
func (r traceRef) refuse(took time.Duration, code int) {
	r.finish(took, result{}, code)
}

// hedgeDelay records the hedge delay the request's timer was armed with.
func (r traceRef) hedgeDelay(d time.Duration) {
	if tr := r.lock(); tr != nil {
		tr.hedgeDelay, tr.hedgeArmed = d, true
		r.unlock()
	}
}

// hedgeRefused records why a hedge that fell due was not sent.
func (r traceRef) hedgeRefused(why hedgeRefusal) {
	if tr := r.lock(); tr != nil {
		tr.refused = why
		r.unlock()
	}
}

// attempt records an attempt's start and returns its index (-1 when not
// recorded).
func (r traceRef) attempt(t *traceRing, a *attempt) int {
	tr := r.lock()
	if tr == nil {
		return -1
	}
	defer r.unlock()
	if tr.n >= t.maxAttempts {
		tr.omitted++
		return -1
	}
	at := attemptTrace{ep: a.ep, role: a.counted(), start: a.start.Sub(tr.start)}
	if tr.n < traceInline {
		tr.inline[tr.n] = at
	} else {
		tr.more = append(tr.more, at)
	}
	tr.n++
	return tr.n - 1
}

func (tr *requestTrace) at(i int) *attemptTrace {
	if i < traceInline {
		return &tr.inline[i]
	}
	return &tr.more[i-traceInline]
}

// endAttempt records how attempt i ended; cause is its context's
// cancellation cause.
func (r traceRef) endAttempt(i int, a *attempt, rep upstreamReply, cause error, end time.Time) {
	if i < 0 {
		return
	}
	tr := r.lock()
	if tr == nil {
		return
	}
	defer r.unlock()
	at := tr.at(i)
	at.ended, at.end = true, end.Sub(tr.start)
	at.out, at.refused, at.status, at.overdue = rep.out, rep.refused, rep.status, a.overdue.Load()
	if rep.out.errorAnswer() || rep.out == outRateLimit {
		at.rpcCode = rep.info.ErrCode
	}
	// Only the transport's own texts: an endpoint's error message may
	// quote the request's params.
	if rep.out == outConnError || rep.out == outInvalid {
		at.cause = rep.cause
	}
	c := a.cancelAt.Load()
	switch {
	case errors.Is(cause, errLost):
		at.why = cancelAnotherWon
	case errors.Is(cause, errRequestDone):
		at.why = cancelRequestDone
	case c != 0 && (a.sampling.Load() || a.toVerdict || a.explore || a.heldForSilence.Load()):
		at.why = cancelKeptRunning
	case c != 0:
		return // it ended on its own as the request let go of it
	case rep.out == outCancelled:
		// cause says nothing more: a read's context is always cancelled
		// by the time its attempt is accounted for.
		at.why = cancelRequestCut
		return
	default:
		return
	}
	// The cancel instant is stored as wall-clock nanos; end and tr.start
	// carry monotonic readings. Taken against tr.start the two clocks
	// mixed, and a loser released 0.07 ms after its cancel read -0.074 ms
	// (seen once in CI). The cancel-to-release time is the wall-clock
	// interval the accounting counts, and the cancel is placed that long
	// before the end.
	at.cancel = at.end - end.Sub(time.Unix(0, c))
}

// won marks attempt i as the one whose answer the client got.
func (r traceRef) won(i int) {
	if i < 0 {
		return
	}
	if tr := r.lock(); tr != nil {
		tr.at(i).won = true
		r.unlock()
	}
}

// maxRequestIDList bounds the comma-separated form of a batch's
// X-Rpcdash-Request-Id. Clients and proxies cap a header: aiohttp at 8190
// bytes a field, nginx's proxy_buffer_size at one page (4 or 8 KB) for all
// of them; a 1000-call batch's list reaches 8 KB once ids have 7 digits.
const maxRequestIDList = 2048

// requestIDs is the X-Rpcdash-Request-Id value of n requests from first:
// their ids in element order, comma-separated, or, when that list would
// pass maxRequestIDList bytes, the range "first-last" of the same
// consecutive ids.
func requestIDs(first uint64, n int) string {
	if n == 1 {
		return strconv.FormatUint(first, 10)
	}
	b := make([]byte, 0, min(n*8, maxRequestIDList+24))
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, first+uint64(i), 10)
		if len(b) > maxRequestIDList {
			return strconv.FormatUint(first, 10) + "-" + strconv.FormatUint(first+uint64(n-1), 10)
		}
	}
	return string(b)
}
