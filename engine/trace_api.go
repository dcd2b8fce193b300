package engine

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// RequestTrace is one client request's trace (GET /v1/requests).
type RequestTrace struct {
	ID     string    `json:"id"`
	Method string    `json:"method"` // "" when the request had none (a body that did not parse)
	Class  string    `json:"class"`  // read, write, stateful; "" with no method
	Start  time.Time `json:"start"`
	// LatencyMS is the request's time from its admission to its answer;
	// while in flight, its time so far.
	LatencyMS float64 `json:"latency_ms"`
	// Outcome: answered, rpc_error (an endpoint's JSON-RPC error relayed),
	// error (rpcdash's own error answer) or in_flight.
	Outcome   string `json:"outcome"`
	ErrorCode int    `json:"error_code,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"` // whose answer was relayed
	Hedged    bool   `json:"hedged"`
	// HedgeDelayMS is the hedge delay in force for the request (its method's
	// at the time); absent when the request was not hedged by design (not a
	// hedgeable read, hedging off for its method, held to one endpoint).
	HedgeDelayMS *float64 `json:"hedge_delay_ms,omitempty"`
	// HedgeRefused is why the last hedge that fell due was not sent then:
	// budget, max_outstanding, paused, queue, late, rate_limited,
	// no_endpoint, untracked (see hedgeRefusal); absent when none was.
	HedgeRefused string         `json:"hedge_refused,omitempty"`
	Attempts     []AttemptTrace `json:"attempts"`
	// AttemptsOmitted counts attempts past the most the engine can send
	// (one per endpoint plus hedge.max_extra): none expected.
	AttemptsOmitted int `json:"attempts_omitted,omitempty"`
}

// AttemptTrace is one upstream attempt of a request, in the order sent.
// Times are milliseconds from the request's start.
type AttemptTrace struct {
	Endpoint string   `json:"endpoint"`
	Role     string   `json:"role"` // primary, hedge, failover
	StartMS  float64  `json:"start_ms"`
	EndMS    *float64 `json:"end_ms"` // null while it runs
	// Outcome: running, answer, endpoint_error, unsupported, http_error,
	// rate_limited, conn_error, refused, timeout, invalid, cancelled.
	Outcome      string `json:"outcome"`
	HTTPStatus   int    `json:"http_status,omitempty"`
	RPCErrorCode int    `json:"rpc_error_code,omitempty"`
	Error        string `json:"error,omitempty"` // the transport's own text (conn_error, refused, invalid)
	Won          bool   `json:"won"`
	Overdue      bool   `json:"overdue,omitempty"` // passed its attempt deadline without an answer
	// CancelReason: another_won, request_done, request_cut, kept_running.
	CancelReason string   `json:"cancel_reason,omitempty"`
	CancelMS     *float64 `json:"cancel_ms,omitempty"`
	// ReleaseMS is a cancelled attempt's cancel-to-release time.
	ReleaseMS *float64 `json:"release_ms,omitempty"`
}

// RequestTraces is GET /v1/requests.
type RequestTraces struct {
	Enabled  bool           `json:"enabled"`
	Capacity int            `json:"capacity"` // server.trace_requests
	Requests []RequestTrace `json:"requests"` // newest first
}

// traceFilter is GET /v1/requests' query.
type traceFilter struct {
	slow   time.Duration
	failed bool
	method string
	hedged bool
	limit  int
}

const defaultTraceLimit = 100

// traceMS is a trace's time in milliseconds, to the microsecond.
func traceMS(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func msp(d time.Duration) *float64 { v := traceMS(d); return &v }

func (t *traceRing) capacity() int {
	if t == nil {
		return 0
	}
	return len(t.slots)
}

func parseTraceFilter(q map[string][]string, capacity int) (traceFilter, error) {
	f := traceFilter{limit: min(defaultTraceLimit, max(capacity, 1))}
	for key, vs := range q {
		v := vs[0]
		if len(vs) > 1 {
			return f, fmt.Errorf("%s: give it once", key)
		}
		var err error
		switch key {
		case "slow_ms":
			n, perr := strconv.ParseFloat(v, 64)
			if perr != nil || !(n >= 0 && n <= 1e9) {
				err = fmt.Errorf("slow_ms: must be a number of milliseconds >= 0, got %q", redact.Sanitize(v, 64))
			}
			f.slow = time.Duration(n * float64(time.Millisecond))
		case "failed", "hedged":
			b, perr := strconv.ParseBool(v)
			if perr != nil {
				err = fmt.Errorf("%s: must be true or false, got %q", key, redact.Sanitize(v, 64))
			}
			if key == "failed" {
				f.failed = b
			} else {
				f.hedged = b
			}
		case "method":
			if v == "" {
				err = fmt.Errorf("method: must not be empty")
			}
			f.method = v
		case "limit":
			n, perr := strconv.Atoi(v)
			top := max(capacity, 1)
			if perr != nil || n < 1 || n > top {
				err = fmt.Errorf("limit: must be an integer between 1 and %d (server.trace_requests), got %q", top, redact.Sanitize(v, 64))
			}
			f.limit = n
		default:
			err = fmt.Errorf("%s: unknown filter (slow_ms, failed, method, hedged, limit)", redact.Sanitize(key, 64))
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

func (f traceFilter) match(tr *requestTrace, now time.Time) bool {
	took := tr.latency
	if !tr.done {
		took = now.Sub(tr.start)
	}
	switch {
	case took < f.slow:
		return false
	case f.failed && (tr.outcome == traceAnswered || tr.outcome == traceInFlight):
		return false
	case f.hedged && !tr.hedged && !tr.sentHedge():
		return false
	case f.method != "" && !strings.EqualFold(string(tr.method[:tr.methodLen]), f.method):
		return false
	}
	return true
}

func (tr *requestTrace) sentHedge() bool {
	for i := range min(tr.n, traceInline+len(tr.more)) {
		if tr.at(i).role == roleHedge {
			return true
		}
	}
	return false
}

// copyOut is the slot's record, its attempts copied, when it holds id.
func (s *traceSlot) copyOut(id uint64) (requestTrace, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r.id != id || id == 0 {
		return requestTrace{}, false
	}
	r := s.r
	r.more = append([]attemptTrace(nil), s.r.more...)
	return r, true
}

// traces returns the newest matching traces first.
func (e *Engine) traces(f traceFilter) RequestTraces {
	t := e.trace
	out := RequestTraces{Enabled: t != nil, Capacity: t.capacity(), Requests: []RequestTrace{}}
	if t == nil {
		return out
	}
	now := e.now()
	last := t.seq.Load()
	for id := last; id > 0 && last-id < uint64(len(t.slots)) && len(out.Requests) < f.limit; id-- {
		r, ok := t.slots[id%uint64(len(t.slots))].copyOut(id)
		if ok && f.match(&r, now) {
			out.Requests = append(out.Requests, r.view(now))
		}
	}
	return out
}

// Trace returns request id's trace while the ring still holds it.
func (e *Engine) Trace(id uint64) (RequestTrace, bool) {
	t := e.trace
	if t == nil {
		return RequestTrace{}, false
	}
	r, ok := t.slots[id%uint64(len(t.slots))].copyOut(id)
	if !ok {
		return RequestTrace{}, false
	}
	return r.view(e.now()), true
}

func (tr *requestTrace) view(now time.Time) RequestTrace {
	v := RequestTrace{
		ID:              strconv.FormatUint(tr.id, 10),
		Method:          redact.Sanitize(string(tr.method[:tr.methodLen]), traceMethodBytes),
		Start:           tr.start,
		LatencyMS:       traceMS(tr.latency),
		Outcome:         tr.outcome.String(),
		ErrorCode:       tr.code,
		Hedged:          tr.hedged || tr.sentHedge(),
		AttemptsOmitted: tr.omitted,
		Attempts:        make([]AttemptTrace, 0, tr.n),
	}
	if tr.methodCut {
		v.Method += "…"
	}
	if tr.hedgeArmed {
		v.HedgeDelayMS = msp(tr.hedgeDelay)
	}
	v.HedgeRefused = tr.refused.String()
	if tr.class >= 0 {
		v.Class = jsonrpc.Class(tr.class).String()
	}
	if !tr.done {
		v.LatencyMS = traceMS(now.Sub(tr.start))
	}
	for i := range min(tr.n, traceInline+len(tr.more)) {
		at := tr.at(i)
		a := AttemptTrace{Endpoint: at.ep.Name, Role: at.role.String(), StartMS: traceMS(at.start),
			Outcome: "running", Won: at.won, Overdue: at.overdue, CancelReason: at.why.String()}
		if at.ended {
			a.EndMS = msp(at.end)
			a.Outcome = at.out.String()
			if at.refused {
				a.Outcome = "refused"
			}
			a.HTTPStatus, a.RPCErrorCode = at.status, at.rpcCode
			if at.cause != "" {
				a.Error = redact.Sanitize(at.cause, redact.MaxUpstream)
			}
		}
		if at.cancel > 0 {
			a.CancelMS = msp(at.cancel)
			if at.ended && (at.why == cancelAnotherWon || at.why == cancelRequestDone) {
				a.ReleaseMS = msp(at.end - at.cancel)
			}
		}
		if at.won {
			v.Endpoint = at.ep.Name
		}
		v.Attempts = append(v.Attempts, a)
	}
	return v
}

// serveTraces is GET /v1/requests.
func (e *Engine) serveTraces(w http.ResponseWriter, r *http.Request) {
	f, err := parseTraceFilter(r.URL.Query(), e.trace.capacity())
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, e.traces(f))
}

// serveTrace is GET /v1/requests/{id}.
func (e *Engine) serveTrace(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 {
		writeAPIError(w, http.StatusBadRequest, fmt.Sprintf("id: must be one request's id, a positive integer (X-Rpcdash-Request-Id lists a batch's ids, or gives their range FIRST-LAST: ask for one of them), got %q", redact.Sanitize(raw, 64)))
		return
	}
	if e.trace == nil {
		writeAPIError(w, http.StatusNotFound, fmt.Sprintf("request %d: not traced: request tracing is off (server.trace_requests = 0)", id))
		return
	}
	tr, ok := e.Trace(id)
	if !ok {
		writeAPIError(w, http.StatusNotFound, fmt.Sprintf("request %d: not in the trace ring, which holds the last %d requests (server.trace_requests)", id, e.trace.capacity()))
		return
	}
	writeJSON(w, http.StatusOK, tr)
}
