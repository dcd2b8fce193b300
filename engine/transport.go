package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/engine/internal/redact"
)

// maxResponseHeaderBytes bounds an upstream's status line and headers
// (net/http's default is 1 MB, all of it quotable in an error).
const maxResponseHeaderBytes = 64 << 10

// outcome classifies how an attempt ended.
type outcome uint8

const (
	outAnswer    outcome = iota // a JSON-RPC answer (result or error object): the endpoint works
	outHTTPError                // 5xx or another non-JSON-RPC HTTP failure
	outConnError                // could not connect or the connection broke
	outTimeout                  // the attempt's or request's deadline passed
	outRateLimit                // HTTP 429
	outInvalid                  // 200 with a body that is not a JSON-RPC answer, or another request's
	outCancelled                // we cancelled it (another attempt won, or the client left)
	// outEndpointError: a JSON-RPC error that is the endpoint's fault
	// (blameEndpoint); outUnsupported: one this endpoint cannot serve
	// (blameUnsupported). Both keep their body, to relay when no endpoint
	// does better.
	outEndpointError
	outUnsupported
)

// responded says whether the endpoint said anything at all (an answer, an
// HTTP error, a 429, a malformed body), as opposed to silence or a broken
// connection.
func (o outcome) responded() bool {
	return o == outAnswer || o == outHTTPError || o == outRateLimit || o == outInvalid || o == outEndpointError || o == outUnsupported
}

// errorAnswer: a JSON-RPC error answer that failed over, relayed when every
// attempt failed.
func (o outcome) errorAnswer() bool { return o == outEndpointError || o == outUnsupported }

func (o outcome) String() string {
	return [...]string{"answer", "http_error", "conn_error", "timeout", "rate_limited", "invalid", "cancelled", "endpoint_error", "unsupported"}[o]
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { b := bufPool.Get().(*bytes.Buffer); b.Reset(); return b }

func putBuf(b *bytes.Buffer) {
	if b != nil && b.Cap() <= 1<<20 {
		bufPool.Put(b)
	}
}

// upstreamReply is what one HTTP exchange with an endpoint produced.
type upstreamReply struct {
	out outcome
	// head is the endpoint's head the answer shows (answerHead), 0 if none;
	// the whole result of a head method's answer (isHeadMethod), which
	// freezeHead and monotonicHead may rewrite.
	head int64
	// final is the number of the block a read of the finalized or safe
	// block was answered with, 0 if none (finality.go).
	final int64
	// readAt is the slot a read was answered as of (a Solana
	// context.slot) or an EVM latest block's number, 0 if none
	// (readfloor.go).
	readAt     int64
	body       *bytes.Buffer // pooled; owner must putBuf
	info       jsonrpc.ResponseInfo
	retryAfter time.Duration
	status     int  // the HTTP status read, 0 when none was
	sent       bool // a connection was obtained: the request may have left
	refused    bool // the endpoint refused the connection (or its name does not resolve): hard evidence
	// unreachable: the connection attempt got no answer within the dial
	// timeout: silence, soft evidence like a hang (not hard as refused).
	unreachable bool
	cause       string
	// notYet: a JSON-RPC error saying the endpoint lacks the block the
	// request names, whose blame placeNotYet settles. behind: settled as
	// the endpoint's lag, an answer set aside while another is asked.
	// nextBlock: settled as a lack of the block after the pool's expected
	// head (blockMaybeMade), set aside while one more endpoint is asked.
	notYet, behind, nextBlock bool
	// lacksYet: behind, its known head below that block or the pool head,
	// by this many blocks (at least 1): it may catch up within the request
	// (catchup.go). 0 otherwise.
	lacksYet int64
	// tooBig: the answer was over server.max_response_bytes and cut. For a
	// read, its breaker verdict waits on the others' (settleDeferred): a
	// size every endpoint answers is the request's.
	tooBig bool
}

// dialTimeout bounds a connection attempt that gets no answer.
const dialTimeout = 5 * time.Second

// idleConnTimeout is how long a keep-alive connection to an endpoint is
// kept unused. A server closing it as idle just as a request goes out on
// it breaks that request: a read is sent again (post), a write that may
// have been read is not. Under the shortest keep-alive timeout servers
// commonly use (Node's 5 s; undici keeps its own 4 s for that reason;
// nginx 75 s, AWS ALB 60 s, geth 120 s), a write meets no such close; the
// cost is a new connection (a TLS handshake) after 4 s without traffic to
// an endpoint. Under load the transport reuses the most recently used
// connection first, which is never that idle.
const idleConnTimeout = 4 * time.Second

func newHTTPClient() *http.Client {
	tr := &http.Transport{
		Proxy:               requestProxy, // only an endpoint's own ([[endpoints]] proxy), never the environment's unasked
		DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     idleConnTimeout,
		TLSHandshakeTimeout: 5 * time.Second,
		ForceAttemptHTTP2:   true,

		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// roundTrip sends body to ep through the fault layer. It never returns an
// error value: every way it can end is an outcome, with a redacted cause.
// A read (read set) is replayable: the transport sends it again on a fresh
// connection when a reused one broke before any answer. Any other request
// is sent once, and its trace says whether a failure provably never left
// (a write's only licence to fail over); reads, which fail over anyway, do
// without the allocations that trace costs.
func (e *Engine) roundTrip(ctx context.Context, ep *endpoint, req *jsonrpc.Request, read bool) upstreamReply {
	f := e.faultOf(ep)
	stale := false
	if f != nil && f.hits() {
		switch f.Mode {
		case FaultError:
			return e.syntheticReply(http.StatusInternalServerError, 0, "injected fault: HTTP 500")
		case Fault429:
			return e.syntheticReply(http.StatusTooManyRequests, f.RetryAfter.D(), "injected fault: HTTP 429")
		case FaultTimeout:
			// Held unanswered while the fault lasts; cleared, run out or
			// replaced, the request goes on to the endpoint, as a stalled
			// endpoint's would once it recovers. Held until the request's
			// deadline, requests failed up to server.request_timeout after
			// the operator had cleared the fault.
			select {
			case <-ctx.Done():
				return e.ctxReply(ctx, false)
			case <-f.ended:
			}
		case FaultLatency:
			t := time.NewTimer(f.Latency.D())
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return e.ctxReply(ctx, false)
			}
		case FaultStale:
			stale = true
		case FaultRefused:
			return upstreamReply{out: outConnError, refused: true, cause: "injected fault: connection refused"}
		case FaultUnreachable:
			wait, cause := dialTimeout, "injected fault: connection failed: dial tcp: i/o timeout (unreachable)"
			if bound, ok := e.connectBound(ctx, ep); ok {
				wait, cause = bound, "injected fault: "+errNoConnection{bound}.Error()
			}
			// Cleared, run out or replaced, the connection attempt goes on
			// to the endpoint, as a timeout's held request does: a trial
			// sent into the fault waited out its 5 s after the operator had
			// cleared it, and failed.
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
				return upstreamReply{out: outConnError, unreachable: true, cause: cause}
			case <-ctx.Done():
				return e.ctxReply(ctx, false)
			case <-f.ended:
			}
		}
	}

	var gate *sendGate
	if !read {
		ctx, gate = gated(ctx)
	}
	resp, err := e.post(ctx, ep, req.Raw, read)
	if errors.Is(err, errBadUpstreamRequest) {
		return upstreamReply{out: outConnError, cause: "bad request to upstream"}
	}
	if err != nil {
		var nc errNoConnection
		if errors.As(err, &nc) {
			return upstreamReply{out: outConnError, unreachable: true, cause: nc.Error()}
		}
		// A read is taken to have left; a request sent once left only if
		// its body began to be written, and abandoning it now keeps the
		// transport from writing it after all.
		sent := read || !gate.abandon()
		if ctx.Err() != nil {
			return e.ctxReply(ctx, sent)
		}
		return upstreamReply{out: outConnError, sent: sent, refused: refusedConn(err), unreachable: dialTimedOut(err),
			cause: e.upstreamText(connErrorText(err))}
	}
	defer resp.Body.Close()
	buf, bad := e.readAnswer(ctx, resp)
	if buf == nil {
		return bad
	}
	r := upstreamReply{body: buf, sent: true, status: resp.StatusCode}
	e.classify(&r, resp.StatusCode, resp.Header.Get("Retry-After"), req)
	if r.out == outHTTPError && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		r.cause = redirectCause(resp)
	}
	if r.notYet {
		e.placeNotYet(ep, req, &r)
	}
	if e.missedBlockhash(ep, req, &r) || e.missedSignature(ep, req, &r) || e.missedReceipt(ep, req, &r) {
		r.behind = true
	}
	if r.out != outAnswer && !r.out.errorAnswer() {
		putBuf(buf)
		r.body = nil
		return r
	}
	if r.out == outAnswer && !r.info.HasError {
		e.identitySeen(ep, req, buf.Bytes())
		r.head = answerHead(req, buf.Bytes())
		if r.head == 0 && e.genesisAnswer(ep, req, buf.Bytes()) {
			r.behind = true
		}
		if e.cfg.Chain.Kind == "evm" && jsonrpc.FinalityTag(req.Method, req.Params) != "" {
			r.final = jsonrpc.ResultNumber(buf.Bytes())
		}
		if e.cfg.Chain.Kind == "solana" {
			r.readAt = jsonrpc.ReadSlot(req.Method, buf.Bytes())
		} else {
			r.readAt = latestAt(req.Method, r.head)
		}
	}
	if stale {
		e.freezeHead(ep, req.Method, &r)
	}
	return r
}

// errBadUpstreamRequest: the HTTP request to an endpoint could not be
// built (post).
var errBadUpstreamRequest = errors.New("bad request to upstream")

// post sends a JSON-RPC body (one request or an upstream batch) to ep,
// through its proxy if it has one. A replayable body (reads only) may be
// sent again by the transport, on a fresh connection, when a reused one
// broke before any byte of the answer: an upstream closing a keep-alive
// connection as idle just as the request went out on it (net/http retries
// a POST only when it says it is idempotent).
//
// A request that is not replayable goes through the send gate in ctx
// (gated): its body is written only through it, and when no connection has
// taken it within connectBound it is abandoned unsent (errNoConnection).
func (e *Engine) post(ctx context.Context, ep *endpoint, body []byte, replayable bool) (*http.Response, error) {
	if replayable {
		hreq, err := e.newUpstreamRequest(ctx, ep, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		hreq.Header[idempotentMark] = nil // marks it idempotent; a nil value is not sent
		return e.client.Do(hreq)
	}
	gate := sendGateOf(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	hreq, err := e.newUpstreamRequest(ctx, ep, nil)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	// GetBody lets the transport send it again only where it does so for
	// any POST: on a fresh connection when nothing was written to the
	// first, or an HTTP/2 stream the server refused unprocessed.
	hreq.GetBody = func() (io.ReadCloser, error) { return &gatedBody{gate: gate, r: bytes.NewReader(body)}, nil }
	hreq.Body, _ = hreq.GetBody()
	hreq.ContentLength = int64(len(body))
	if bound, ok := e.connectBound(ctx, ep); ok {
		t := time.AfterFunc(bound, func() {
			if gate.abandon() {
				cancel(errNoConnection{bound})
			}
		})
		defer t.Stop()
	}
	resp, err := e.client.Do(hreq)
	if err != nil {
		var nc errNoConnection
		if errors.As(context.Cause(ctx), &nc) {
			err = nc
		}
		cancel(nil)
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func (e *Engine) newUpstreamRequest(ctx context.Context, ep *endpoint, body io.Reader) (*http.Request, error) {
	hreq, err := http.NewRequestWithContext(withProxy(ctx, ep), http.MethodPost, ep.url, body)
	if err != nil {
		return nil, errBadUpstreamRequest
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	return hreq, nil
}

// idempotentMark is the header key net/http's Transport reads as a POST's
// promise that it may be sent twice (Request.isReplayable).
const idempotentMark = "X-Idempotency-Key"

// readAnswer reads an answer's body within server.max_response_bytes. An
// answer over the bound is cut, without reading further when its
// Content-Length announces it, and charged to the endpoint as invalid
// (the connection is dropped, not reused). It returns the pooled body, or
// nil and the reply to give instead.
func (e *Engine) readAnswer(ctx context.Context, resp *http.Response) (*bytes.Buffer, upstreamReply) {
	limit := e.cfg.Server.MaxResponseBytes
	tooBig := func() upstreamReply {
		return upstreamReply{out: outInvalid, sent: true, tooBig: true,
			cause: fmt.Sprintf("answer exceeds server.max_response_bytes (%d bytes): cut", limit)}
	}
	if resp.ContentLength > limit {
		return nil, tooBig()
	}
	buf := getBuf()
	var body io.Reader = resp.Body
	if b := budgetOf(ctx); b != nil {
		body = b.reader(body)
	}
	// The pooled buffer's room first; past it, growth bounded by the
	// announced length and the limit.
	b, err := readCapped(buf.AvailableBuffer(), body, resp.ContentLength, limit)
	if cap(b) == buf.Available() {
		buf.Write(b)
	} else {
		buf = bytes.NewBuffer(b)
	}
	switch {
	case errors.Is(err, errOverLimit):
		putBuf(buf)
		return nil, tooBig()
	case err != nil:
		putBuf(buf)
		if errors.Is(err, errBatchTooLarge) {
			// The batch, not the endpoint, ran over: a cancellation.
			return nil, upstreamReply{out: outCancelled, sent: true, cause: "cancelled: " + errBatchTooLarge.Error()}
		}
		if ctx.Err() != nil {
			return nil, e.ctxReply(ctx, true)
		}
		return nil, upstreamReply{out: outConnError, sent: true, cause: e.upstreamText("reading answer: " + connErrorText(err))}
	}
	dropBOM(buf)
	return buf, upstreamReply{}
}

// utf8BOM is the byte order mark some servers put before a JSON body.
var utf8BOM = []byte("\xEF\xBB\xBF")

// dropBOM removes a leading byte order mark from an answer: clients take
// such a body as JSON (fetch's res.json() drops it), so it is an answer,
// and it is relayed without the mark, which JSON itself does not allow.
func dropBOM(buf *bytes.Buffer) {
	if b := buf.Bytes(); bytes.HasPrefix(b, utf8BOM) {
		n := copy(b, b[len(utf8BOM):])
		buf.Truncate(n)
	}
}

// upstreamText makes text an upstream had a hand in fit to show: no
// credentials, nothing a terminal acts on, bounded.
func (e *Engine) upstreamText(s string) string {
	return redact.Sanitize(e.scrub.Scrub(s), redact.MaxUpstream)
}

func (e *Engine) syntheticReply(status int, retryAfter time.Duration, cause string) upstreamReply {
	out := outHTTPError
	if status == http.StatusTooManyRequests {
		out = outRateLimit
	}
	return upstreamReply{out: out, retryAfter: retryAfter, status: status, cause: cause}
}

func (e *Engine) ctxReply(ctx context.Context, sent bool) upstreamReply {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return upstreamReply{out: outTimeout, sent: sent, cause: "timed out"}
	}
	return upstreamReply{out: outCancelled, sent: sent, cause: "cancelled"}
}

// connErrorText names the network failure without the URL that Go's
// errors quote (it may carry a key).
func connErrorText(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Op == "dial" {
			return "connection failed: " + op.Err.Error()
		}
		return op.Op + ": " + op.Err.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "DNS lookup failed: " + dns.Err
	}
	// Go's client wraps its error as `Post "URL": cause`; the cause is
	// kept whole. Cutting at the text's last ": " kept only what follows
	// it, which in a malformed header or status line is the upstream's own
	// bytes: the fault went unnamed, and an upstream could word the error.
	var ue *url.Error
	for errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return err.Error()
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	// Seconds past what a Duration holds ask for the longest wait there
	// is: multiplied out they wrapped, to a negative wait (read as none,
	// the shortest back-off) or an arbitrary one.
	if s, err := strconv.Atoi(strings.TrimSpace(v)); (err == nil || errors.Is(err, strconv.ErrRange)) && s >= 0 {
		if s > math.MaxInt64/int(time.Second) {
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
