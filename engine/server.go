package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"golang.org/x/net/http/httpguts"
)

// Response headers on every proxied answer.
const (
	HeaderEndpoint = "X-Rpcdash-Endpoint"
	HeaderAttempts = "X-Rpcdash-Attempts"
	HeaderHedged   = "X-Rpcdash-Hedged"
	// HeaderRequestID names the request's trace (GET /v1/requests/{id});
	// a batch's ids are comma-separated in element order. Absent when
	// server.trace_requests is 0.
	HeaderRequestID = "X-Rpcdash-Request-Id"
)

// RPCHandler serves the local JSON-RPC port: POST bodies on any path, and
// the health answer to GET /healthz and to an empty GET on any path, behind
// the browser guard (Host and Origin checks). geth answers an empty GET 200
// for load balancers' health checks: one pointed at a node keeps working
// pointed at rpcdash.
func (e *Engine) RPCHandler() http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		get := r.Method == http.MethodGet || r.Method == http.MethodHead
		if get && websocketUpgrade(r) {
			e.traceRefused(w, e.now(), jsonrpc.CodeInvalidRequest)
			writeRPCError(w, http.StatusNotImplemented, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: errNoWebsocket})
			return
		}
		if get && (r.URL.Path == "/healthz" || r.URL.RawQuery == "" && r.ContentLength <= 0) {
			e.serveHealth(w)
			return
		}
		if r.Method != http.MethodPost {
			closeUnreadBody(w, r, e.cfg.Server.ReadTimeout)
			w.Header().Set("Allow", http.MethodPost)
			e.traceRefused(w, e.now(), jsonrpc.CodeInvalidRequest)
			writeRPCError(w, http.StatusMethodNotAllowed, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC requests must be HTTP POST"})
			return
		}
		e.serveRPC(w, r)
	})
	return newBrowserGuard(e.cfg.Server, nil, func(w http.ResponseWriter, status int, msg string) {
		e.traceRefused(w, e.now(), jsonrpc.CodeInvalidRequest)
		writeRPCError(w, status, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg})
	}).wrap(h)
}

// errNoWebsocket answers a websocket handshake, which would otherwise be
// an empty GET and get the health answer: a client library then reports
// only "unexpected response 200".
const errNoWebsocket = "websocket is not supported: rpcdash serves JSON-RPC over HTTP POST on this port; " +
	"use its http:// URL, and a provider's websocket URL for subscriptions (eth_subscribe, Solana's *Subscribe)"

// websocketUpgrade says whether r asks to become a websocket.
func websocketUpgrade(r *http.Request) bool {
	return httpguts.HeaderValuesContainsToken(r.Header["Upgrade"], "websocket")
}

// serveHealth: "endpoints" counts those that may answer clients (shadows
// never do), the pool "routable" is counted against.
func (e *Engine) serveHealth(w http.ResponseWriter) {
	routable, serving := 0, 0
	now := e.now()
	for _, ep := range e.endpoints {
		if ep.isShadow() {
			continue
		}
		serving++
		if e.routable(ep, now) {
			routable++
		}
	}
	// With none routable, panic routing still serves reads while an endpoint
	// is left that is not drained, on the wrong chain or refusing.
	ok := routable > 0 || e.lastResort() > 0
	panicking, _, _ := e.panicInfo()
	w.Header().Set("Content-Type", "application/json")
	status := http.StatusOK
	if !ok {
		status = http.StatusServiceUnavailable
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"ok":%v,"routable":%d,"endpoints":%d,"panic":%v}`+"\n", ok, routable, serving, panicking)
}

func writeRPCError(w http.ResponseWriter, status int, err *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.AppendError(nil, nil, err))
}

func (e *Engine) serveRPC(w http.ResponseWriter, r *http.Request) {
	// Admission comes before any work, the body's read included. At the
	// cap, the admitted request whose body arrives the slowest gives its
	// place (slowrequest.go); its count goes once its read has failed, a
	// moment over the cap.
	conn := requestConn(r)
	if n := e.admitted.Add(1); n > int64(e.cfg.Server.MaxInflight) && !conn.makeRoomAtInflight() {
		e.admitted.Add(-1)
		closeUnreadBody(w, r, e.cfg.Server.ReadTimeout)
		e.traceRefused(w, e.now(), jsonrpc.CodeLimitExceeded)
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusServiceUnavailable, &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded,
			Message: fmt.Sprintf("rpcdash is serving server.max_inflight (%d) requests already: retry shortly", e.cfg.Server.MaxInflight)})
		return
	}
	defer e.admitted.Add(-1)
	conn.holdsAdmission(true)
	defer conn.holdsAdmission(false)
	start := e.now()
	// The body is not pooled: requests alias it, and a cancelled attempt's
	// transport may still be reading it after the handler has returned.
	raw, giveBack, err := e.readBody(w, r)
	defer giveBack()
	if err != nil {
		e.refuseBody(w, err, start)
		return
	}
	conn.bodyRead()
	n := e.inflight.Add(1)
	e.hedge.updatePause(n)
	defer func() { e.hedge.updatePause(e.inflight.Add(-1)) }()

	body, perr := jsonrpc.ParseBodyLimit(raw, e.cfg.Server.MaxBatch)
	if perr != nil {
		e.traceRefused(w, start, perr.Code)
		e.writeDeadline(w)
		writeRPCError(w, http.StatusOK, perr)
		return
	}
	began := time.Now()
	ctx, cancel := context.WithDeadline(r.Context(), began.Add(e.bodyTimeout(body.Elements)))
	defer cancel()
	ctx, stop := e.cutAtShutdown(ctx)
	defer stop()
	if !body.Batch {
		e.serveSingle(ctx, w, body.Elements[0], start)
		return
	}
	e.serveBatch(ctx, w, body.Elements, start, began)
}

// refuseBody answers a request whose body could not be read whole.
func (e *Engine) refuseBody(w http.ResponseWriter, err error, start time.Time) {
	e.writeDeadline(w)
	// What is left of the body is not waited for before the answer (a
	// Content-Length over server.max_body_bytes is refused unread); the
	// read deadline readBody set still bounds what follows it. A batch over
	// server.max_batch was read to its end: its connection can serve on.
	if !errors.Is(err, errBatchOverLimit) {
		w.Header().Set("Connection", "close")
	}
	var (
		tooBig         *http.MaxBytesError
		decodedTooBig  *decodedTooLargeError
		notDecodable   *bodyDecodeError
		unsupportedEnc *unsupportedEncodingError
	)
	status, rerr := http.StatusBadRequest, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "could not read request body"}
	switch {
	case errors.Is(err, errBatchOverLimit):
		status, rerr = http.StatusOK, jsonrpc.BatchTooLarge(e.cfg.Server.MaxBatch)
	case errors.As(err, &tooBig):
		status, rerr = http.StatusRequestEntityTooLarge, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("request body exceeds server.max_body_bytes (%d bytes)", e.cfg.Server.MaxBodyBytes)}
	case errors.As(err, &decodedTooBig):
		status, rerr = http.StatusRequestEntityTooLarge, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("request body exceeds server.max_body_bytes (%d bytes) once decoded from its Content-Encoding %s", e.cfg.Server.MaxBodyBytes, decodedTooBig.coding)}
	case errors.Is(err, errBodyBudget):
		w.Header().Set("Retry-After", "1")
		status, rerr = http.StatusServiceUnavailable, &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded,
			Message: fmt.Sprintf("the request bodies rpcdash is serving already hold server.max_held_body_bytes (%d bytes, as read or decoded): retry shortly", e.cfg.Server.heldBodyLimit())}
	case errors.As(err, &unsupportedEnc):
		w.Header().Set("Accept-Encoding", acceptedEncodings)
		status, rerr = http.StatusUnsupportedMediaType, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
	case errors.As(err, &notDecodable):
		rerr = &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: err.Error()}
	case e.stopping.Err() != nil:
		status, rerr = http.StatusServiceUnavailable, &jsonrpc.Error{Code: jsonrpc.CodeUpstream,
			Message: "rpcdash is shutting down: the request was not run; send it again"}
	case errors.Is(err, os.ErrDeadlineExceeded):
		status, rerr = http.StatusRequestTimeout, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("request body not received within server.read_timeout (%s)", e.cfg.Server.ReadTimeout)}
	}
	e.traceRefused(w, start, rerr.Code)
	writeRPCError(w, status, rerr)
}

// traceRefused traces a request refused before it had a method and names
// it in the answer's header.
func (e *Engine) traceRefused(w http.ResponseWriter, start time.Time, code int) {
	if e.trace == nil {
		return
	}
	id := e.trace.reserve(1)
	e.trace.begin(id, start).refuse(e.now().Sub(start), code)
	w.Header().Set(HeaderRequestID, strconv.FormatUint(id, 10))
}

// traceStart opens the traces of n requests (a body's elements) and names
// them in the answer's header; nil when tracing is off.
func (e *Engine) traceStart(w http.ResponseWriter, start time.Time, refs []traceRef) {
	if e.trace == nil {
		return
	}
	first := e.trace.reserve(len(refs))
	for i := range refs {
		refs[i] = e.trace.begin(first+uint64(i), start)
	}
	w.Header().Set(HeaderRequestID, requestIDs(first, len(refs)))
}

// errShuttingDown is the cause of requests cut at server.shutdown_timeout.
var errShuttingDown = errors.New("rpcdash is shutting down")

// shuttingDownError answers res, a request cut at server.shutdown_timeout.
// Its code says whether a client may send it again on its own, as viem
// decides (buildRequest's shouldRetry): -32603, the server's failure, it
// retries, as it retries a timeout (see Failover and hangs); -32000 it
// takes for invalid input and never retries. A read, and a request that
// never left, is safe to send again: -32603, and rpcdash restarted or
// another instance answers the retry. A request sent once (a write, a
// method in no table, a stateful call) that may have left may have been
// carried out: sent again it may be carried out twice, so -32000, and the
// words say to check first (mayHaveRun).
func shuttingDownError(res result) *jsonrpc.Error {
	const cut = "rpcdash is shutting down: the request was cut at server.shutdown_timeout"
	switch {
	case res.class == jsonrpc.ClassRead:
		return &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: cut + "; send it again"}
	case res.leftTo == "":
		return &jsonrpc.Error{Code: jsonrpc.CodeUpstream, Message: cut + " before it was sent to any endpoint; send it again"}
	case res.class == jsonrpc.ClassStateful:
		return &jsonrpc.Error{Code: jsonrpc.CodeMayHaveRun, Message: cut + " after it was sent to " + res.leftTo +
			", which may have carried it out (created the filter, taken its changes or uninstalled it); " +
			"the filters rpcdash holds end with it: create a new filter, and read what it missed with eth_getLogs"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeMayHaveRun, Message: cut + " after it was " + mayHaveRun(res.leftTo)}
}

// mayHaveRun is what a client is told of a write (or a method in no table)
// that ended without an answer after it was sent to leftTo, the endpoints
// it may have reached: cut at shutdown (shuttingDownError), by its own
// deadline, or failed after it was sent (execution.failedSentOnce). Its error's code is
// jsonrpc.CodeMayHaveRun, which clients do not retry on their own.
func mayHaveRun(leftTo string) string {
	return "sent to " + leftTo + ", which may have carried it out: check before sending it again (look a transaction up by its hash or signature), or it may be carried out twice"
}

// filterMayHaveRun is what a client is told of a filter call (stateful)
// that ended without an answer, by its deadline or a failure, after it was
// sent to leftTo: the node may have created a filter whose id never came
// back, taken changes that will not be given again, or uninstalled it. A
// -32603 would be retried by viem, and a retried eth_getFilterChanges
// returns only what came after: the changes taken are lost unseen.
func filterMayHaveRun(leftTo string) string {
	return "sent to " + leftTo + ", which may have carried it out (created a filter whose id did not come back, taken changes it will not give again, or uninstalled it): read what may be missed with eth_getLogs, and create a new filter if one is needed"
}

// answerError is the error a client gets for res, a failed request: the
// executor's, unless the request was cut by shutdown or by its batch's
// answer bound, which the executor only sees as a cancellation.
func answerError(ctx context.Context, res result) *jsonrpc.Error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errShuttingDown):
		return shuttingDownError(res)
	case errors.Is(cause, errBatchTooLarge):
		return &jsonrpc.Error{Code: jsonrpc.CodeResponseTooLarge, Message: errBatchTooLarge.Error()}
	}
	return res.err
}

// writeDeadline gives the client server.write_timeout to take its answer:
// a client that stops reading does not hold the answer's memory for long.
func (e *Engine) writeDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(e.cfg.Server.WriteTimeout))
}

func (e *Engine) serveSingle(ctx context.Context, w http.ResponseWriter, el jsonrpc.Element, start time.Time) {
	var tr [1]traceRef
	e.traceStart(w, start, tr[:])
	if el.Err != nil {
		tr[0].refuse(e.now().Sub(start), el.Err.Code)
		e.writeDeadline(w)
		w.Header().Set("Content-Type", "application/json")
		if el.NoAnswer() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Write(jsonrpc.AppendError(nil, el.ID, el.Err))
		return
	}
	res := e.serveOne(ctx, el.Req, start, tr[0])
	defer e.release(res) // after the answer is written: its body, its mirrors
	e.writeDeadline(w)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	setResultHeaders(h, res.endpointName(), res.attempts, res.hedged)
	if el.Req.IsNotification() {
		// geth answers a notification 200 with an empty body.
		w.WriteHeader(http.StatusOK)
		return
	}
	if res.err != nil {
		err := answerError(ctx, res)
		if wait, ok := rateLimited(res, err); ok {
			h.Set("Retry-After", retryAfterHeader(wait))
			w.WriteHeader(http.StatusTooManyRequests)
		}
		w.Write(jsonrpc.AppendError(nil, el.Req.ID, err))
		return
	}
	body := e.answerBody(res)
	if res.mirror != nil {
		// On the wire before the mirrors start (release); the length set
		// keeps the flushed answer from being sent chunked.
		h.Set("Content-Length", strconv.Itoa(len(body)))
		e.answers.writeAnswer(w, body)
		http.NewResponseController(w).Flush()
		return
	}
	e.answers.writeAnswer(w, body)
}

func setResultHeaders(h http.Header, endpoint string, attempts int, hedged bool) {
	if endpoint != "" {
		h.Set(HeaderEndpoint, endpoint)
	}
	h.Set(HeaderAttempts, strconv.Itoa(attempts))
	if hedged {
		h.Set(HeaderHedged, "1")
	} else {
		h.Set(HeaderHedged, "0")
	}
}

// batchWriters are the batch answers' 32 KiB write buffers, reused.
var batchWriters = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}

// batchFanout bounds the elements of one batch in flight at once: a batch
// of server.max_batch (geth's 1000) sent upstream all at once would open as
// many connections to a provider from one client call; a node runs a batch
// one call after another, so this is still far quicker.
const batchFanout = 100

// serveBatch runs every element on its own (each by its own method class)
// and answers in request order. The elements run at once, except around
// writes and filter calls (batchOrder); an element whose turn never came
// is answered that it was not sent (notSent). X-Rpcdash-Endpoint lists the
// endpoints that answered, in element order without repeats. The answers
// together are bounded by server.max_response_bytes, as each one is:
// upstream bytes are counted against the batch while they are read, and
// once the bound is passed the batch's open elements are cut and answered
// -32003, as geth answers a batch over its response limit.
//
// Each element has its own method's deadline from began (requestTimeout);
// the body's is the longest of them.
func (e *Engine) serveBatch(ctx context.Context, w http.ResponseWriter, els []jsonrpc.Element, start, began time.Time) {
	ctx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	ctx = withAnswerBudget(ctx, e.cfg.Server.MaxResponseBytes, cut)
	bodyDeadline, _ := ctx.Deadline()
	results := make([]result, len(els))
	var traces []traceRef
	if e.trace != nil {
		traces = make([]traceRef, len(els))
		e.traceStart(w, start, traces)
	}
	trace := func(i int) traceRef {
		if traces == nil {
			return traceRef{}
		}
		return traces[i]
	}
	b := &batchRun{e: e, ctx: ctx, els: els, results: results, start: start, began: began, bodyDeadline: bodyDeadline,
		trace: trace, slots: make(chan struct{}, min(len(els), batchFanout)), onceSlots: make(chan struct{}, min(len(els), batchFanout))}
	var order batchOrder
	var whole, unanswered []int
	// once: the calls of methods in no table that wait for nothing;
	// onceAfter: those that wait for the batch's first write (onceWait, all
	// the same, batchOrder.admit).
	var once, onceAfter []onceElement
	var onceWait []chan struct{}
	var onceWhy string
	// The elements run on their own are started once every element is
	// admitted and the calls sent once are under way: a read of the
	// pending state may wait for one of those (batchOrder), and must not
	// hold a slot it needs.
	var later []func()
	for i, el := range els {
		if el.Err != nil {
			trace(i).refuse(e.now().Sub(start), el.Err.Code)
			continue
		}
		after, why, done := order.admit(e, el.Req)
		if e.sentOnceInBatch(el, after) {
			if len(after) == 0 {
				once = append(once, onceElement{i: i, done: done})
			} else {
				onceAfter, onceWait, onceWhy = append(onceAfter, onceElement{i: i, done: done}), after, why
			}
			continue
		}
		if after == nil && done == nil && e.forwardable(el) {
			if el.Req.IsNotification() {
				unanswered = append(unanswered, i)
			} else {
				whole = append(whole, i)
			}
			continue
		}
		later = append(later, func() {
			if done != nil {
				defer close(done)
			}
			ctx, cancel := b.elementCtx(el.Req.Method)
			defer cancel()
			if why == waitFirstWrite {
				ctx = withBatchWriteBefore(ctx)
			}
			if len(after) > 0 {
				turn, ok, stop := e.awaitTurn(ctx, el.Req, after)
				defer stop()
				if !ok {
					results[i] = e.notSent(turn, el.Req, why, start, trace(i))
					return
				}
			}
			results[i] = e.serveOne(ctx, el.Req, start, trace(i))
		})
	}
	b.serveOnce(once, false)
	b.serveOnceAfter(onceAfter, onceWait, onceWhy)
	for _, f := range later {
		b.spawn(f)
	}
	b.serveWhole(whole)
	b.serveWhole(unanswered) // apart: the calls' upstream batches are hedged, theirs never
	b.wg.Wait()
	defer func() {
		for _, res := range results {
			e.release(res)
		}
	}()
	var names []string
	attempts, hedged := 0, false
	for _, res := range results {
		attempts += res.attempts
		hedged = hedged || res.hedged
		if name := res.endpointName(); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	e.writeDeadline(w)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	setResultHeaders(h, strings.Join(names, ","), attempts, hedged)
	if allNotifications(els) {
		w.WriteHeader(http.StatusOK)
		return
	}
	parts := e.batchAnswerParts(ctx, els, results)
	// With its length announced, the client has the whole answer at its
	// last byte (flushed below), not once the handler has returned the
	// answers' buffers (release) and ended the chunked body.
	size := 1 // "]"
	for _, p := range parts {
		size += len(p) + 1 // and "[" or ","
	}
	h.Set("Content-Length", strconv.Itoa(size))
	if wait, ok := batchRateLimited(ctx, els, results); ok {
		h.Set("Retry-After", retryAfterHeader(wait))
		w.WriteHeader(http.StatusTooManyRequests)
	}
	// Written part by part: the answers are not copied into one buffer.
	var out io.Writer = w
	if a := e.answers.begin(w, size); a != nil {
		defer e.answers.end(a)
		out = a
	}
	bw := batchWriters.Get().(*bufio.Writer)
	bw.Reset(out)
	defer func() { bw.Reset(nil); batchWriters.Put(bw) }()
	for k, p := range parts {
		if k == 0 {
			bw.WriteByte('[')
		} else {
			bw.WriteByte(',')
		}
		bw.Write(p)
	}
	bw.WriteByte(']')
	bw.Flush()
	// On the wire before the handler returns: before the mirrors start and
	// the buffers go back (release).
	http.NewResponseController(w).Flush()
}

// batchAnswerParts are the answers of a batch's elements in order, the
// notifications' left out: each answer's body, or its error object.
func (e *Engine) batchAnswerParts(ctx context.Context, els []jsonrpc.Element, results []result) [][]byte {
	parts := make([][]byte, 0, len(els))
	for i, el := range els {
		res := results[i]
		switch {
		case el.NoAnswer():
		case el.Err != nil:
			parts = append(parts, jsonrpc.AppendError(nil, el.ID, el.Err))
		case res.err != nil:
			parts = append(parts, jsonrpc.AppendError(nil, el.Req.ID, answerError(ctx, res)))
		default:
			parts = append(parts, e.answerBody(res))
		}
	}
	return parts
}

// rateLimited says whether a failed request's answer, err as it goes out
// (answerError), is a rate limit (HTTP 429 to the client), and its
// Retry-After: not when the request was cut and err says so instead.
func rateLimited(res result, err *jsonrpc.Error) (time.Duration, bool) {
	return res.retryAfter, res.retryAfter > 0 && err == res.err
}

// batchRateLimited: a batch with an element rate limited is answered
// HTTP 429, as a limited provider answers it, when a client resending all
// of it after the Retry-After resends nothing whose running again matters:
// every other element is a read (run again, it reads again), or was never
// sent (invalid, its turn never came, or it reached no endpoint). A write
// or a stateful call that ran (changes taken from a filter are not given
// again) keeps the answer 200, each limited element answered -32005 in its
// place. ethers retries a 429 but not a -32005 in a 200: one filter poll
// limited beside an eth_blockNumber failed its contract.on. The
// Retry-After is the soonest of the limited elements'.
func batchRateLimited(ctx context.Context, els []jsonrpc.Element, results []result) (time.Duration, bool) {
	if answerError(ctx, result{}) != nil {
		return 0, false // cut: every element's answer says so instead
	}
	var soonest time.Duration
	for i, el := range els {
		res := results[i]
		switch wait := res.retryAfter; {
		case el.Err == nil && wait > 0:
			if soonest == 0 || wait < soonest {
				soonest = wait
			}
		case el.Err != nil, res.class == jsonrpc.ClassRead, res.err != nil && res.leftTo == "":
		default:
			return 0, false
		}
	}
	return soonest, soonest > 0
}

func allNotifications(els []jsonrpc.Element) bool {
	for _, el := range els {
		if !el.NoAnswer() {
			return false
		}
	}
	return true
}

// readBody reads the request body within server.max_body_bytes and
// server.read_timeout, growing its buffer as bytes arrive rather than
// trusting Content-Length. Shutdown cuts a read still under way: a request
// not yet received is not in flight.
// giveBack returns what a decoded body took of decodedBodyBudget, once
// the request is served.
func (e *Engine) readBody(w http.ResponseWriter, r *http.Request) (body []byte, giveBack func(), err error) {
	giveBack = func() {}
	rc := http.NewResponseController(w)
	// Errors are ignored: a ResponseWriter without a connection (a test
	// recorder) has no deadline to set, and needs none.
	_ = rc.SetReadDeadline(time.Now().Add(e.cfg.Server.ReadTimeout))
	var mu sync.Mutex
	reading := true
	stop := context.AfterFunc(e.stopping, func() {
		mu.Lock()
		defer mu.Unlock()
		if reading {
			_ = rc.SetReadDeadline(time.Unix(1, 0))
		}
	})
	defer func() {
		stop()
		mu.Lock()
		reading = false
		mu.Unlock()
		// No deadline while the request is served: net/http's
		// background read would cancel the request when it passed. A body
		// not read whole keeps its deadline: after the refusal net/http
		// reads on to discard what is left of a body under 256 KiB, and
		// with no deadline a client that stalls mid-body would hold the
		// connection for ever; past the deadline that read fails at once
		// and the connection is closed after the answer.
		if err == nil {
			_ = rc.SetReadDeadline(time.Time{})
		}
	}()
	limit := e.cfg.Server.MaxBodyBytes
	if r.ContentLength > limit {
		return nil, giveBack, &http.MaxBytesError{Limit: limit}
	}
	coding, err := bodyCoding(r.Header)
	if err != nil {
		return nil, giveBack, err
	}
	// MaxBytesReader also tells net/http not to read on after the limit.
	received := http.MaxBytesReader(w, r.Body, limit)
	charged := &chargedReader{r: received, held: &e.bodies, limit: e.cfg.Server.heldBodyLimit()}
	hint, capAt := r.ContentLength, limit+1
	if coding != "" {
		// The decoded bytes are held and charged; the bound on them is
		// readCapped's, MaxBytesReader's being on what is received.
		charged.r = newDecodingReader(coding, received)
		hint, capAt = -1, limit
	}
	in := &batchCountingReader{r: charged, rest: received, c: jsonrpc.NewBatchCounter(e.cfg.Server.MaxBatch)}
	body, err = readCapped(make([]byte, 0, firstBodyBuffer(hint)), in, hint, capAt)
	if coding != "" && errors.Is(err, errOverLimit) {
		err = &decodedTooLargeError{coding: coding}
	}
	if err != nil {
		charged.giveBack()
		return nil, giveBack, err
	}
	return body, charged.giveBack, nil
}

// errBatchOverLimit: the body is a batch of more than server.max_batch
// elements, seen before it was read whole.
var errBatchOverLimit = errors.New("batch over server.max_batch")

// batchCountingReader counts a batch's elements as they arrive: a batch
// of millions of tiny elements is refused after a few KiB read, not after
// server.max_body_bytes were read and held (13.6 MB allocated for a 5 MB
// body, BenchmarkServe_HugeBatchRefused).
type batchCountingReader struct {
	r io.Reader
	// rest is the body as received, read on to its end past the limit: a
	// compressed body's rest is discarded undecoded.
	rest io.Reader
	c    jsonrpc.BatchCounter
}

// Read reads on past a batch over the limit to discard the rest of the
// body (bounded by server.max_body_bytes and server.read_timeout, held
// nowhere): a connection closed on a client still sending resets, and the
// reset can lose the answer before the client reads it.
func (b *batchCountingReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == nil && b.c.Write(p[:n]) {
		if _, err := io.Copy(io.Discard, b.rest); err != nil {
			return n, err // too large or too slow after all: refused as such
		}
		return n, errBatchOverLimit
	}
	return n, err
}

// maxFirstBodyBuffer is the most a request body's first buffer takes
// before any byte has arrived; past it the buffer grows as bytes arrive.
const maxFirstBodyBuffer = 4 << 10

// firstBodyBuffer is the capacity a request body's buffer starts with: a
// body announced smaller than maxFirstBodyBuffer gets its own size, plus
// the byte that lets the read see EOF without growing. A single call is
// ~100 bytes: a 4 KiB buffer for each was a sixth of what a request
// through the engine allocated.
func firstBodyBuffer(contentLength int64) int {
	if contentLength >= 0 && contentLength < maxFirstBodyBuffer {
		return int(contentLength) + 1
	}
	return maxFirstBodyBuffer
}
