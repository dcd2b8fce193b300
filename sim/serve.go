package sim

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const maxBodyBytes = 8 << 20

// ServeHTTP answers JSON-RPC on every path except /_sim/, the control API.
func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !u.enter() {
		abort()
	}
	defer u.handler.Done()
	if strings.HasPrefix(r.URL.Path, controlPrefix) {
		u.serveControl(w, r)
		return
	}
	u.serveRPC(w, r)
}

// serveRPC runs the fixed order the tests rely on: record and count on
// arrival, decide the fault, then wait the service time, then answer.
func (u *Upstream) serveRPC(w http.ResponseWriter, r *http.Request) {
	// Reading the whole body also lets net/http notice a client that goes
	// away, which is what cancels r.Context().
	arrived := time.Now()
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var (
		reqs     []request
		batch    bool
		parseErr *Error
	)
	if readErr == nil && r.Method == http.MethodPost {
		reqs, batch, parseErr = decodeBody(body)
	}
	u.record(reqs)
	u.countArrival(reqs)
	defer u.countDeparture()

	switch {
	case readErr != nil:
		u.writeBody(w, http.StatusRequestEntityTooLarge, encodeError(nil, false, &Error{Code: CodeInvalidRequest, Message: "request body too large"}))
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		u.writeBody(w, http.StatusMethodNotAllowed, encodeError(nil, false, &Error{Code: CodeInvalidRequest, Message: "use POST"}))
		return
	}

	s := u.snapshot()
	u.lastID.swap(reqs)
	mode := u.decide(s)
	if mode == ModeRateLimit && !s.rateLimits(reqs) {
		mode = ModeNormal
	}
	if u.serveHostile(w, r, mode, s, reqs, batch) {
		return
	}
	switch mode {
	case ModeHang:
		u.hang(r.Context(), len(reqs))
		return
	case ModeError:
		u.writeBody(w, http.StatusInternalServerError, encodeError(reqs, batch, &Error{Code: CodeInternal, Message: "sim: upstream error"}))
		return
	case ModeRateLimit:
		if s.retryAfter > 0 {
			secs := (s.retryAfter + time.Second - 1) / time.Second
			w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		}
		u.writeBody(w, http.StatusTooManyRequests, encodeError(reqs, batch, &Error{Code: CodeRateLimited, Message: "sim: rate limited"}))
		return
	}

	if !u.sleep(r.Context(), u.serviceTime(s, reqs), len(reqs)) {
		if r.Context().Err() != nil {
			u.countCancelledTime(time.Since(arrived))
		}
		return
	}
	if parseErr != nil {
		u.writeBody(w, http.StatusOK, encodeError(nil, false, parseErr))
		return
	}
	switch s.mode {
	case ModeRPCError:
		u.writeBody(w, http.StatusOK, encodeResponses(reqs, batch, func(r request) (any, *Error) {
			if confinedTo(s.rpcErrMethods, r.Method) {
				return nil, &Error{Code: s.rpcErrCode, Message: s.rpcErrMsg}
			}
			return u.answer(r)
		}))
	case ModeForeignID:
		u.writeBody(w, http.StatusOK, encodeResponses(u.foreignIDs(reqs, batch), batch, u.answer))
	default:
		u.writeBody(w, http.StatusOK, encodeResponses(reqs, batch, u.answer))
	}
}

// decide picks the fault for one HTTP request: the mode first, then one
// draw against the error and rate-limit shares.
func (u *Upstream) decide(s settings) Mode {
	switch s.mode {
	case ModeHang, ModeError, ModeRateLimit, ModeHugeAnswer, ModeTrickle, ModeMalformedStatus:
		return s.mode
	}
	if s.errorRate <= 0 && s.rateLimitRate <= 0 {
		return ModeNormal
	}
	p := u.faultDraw()
	switch {
	case p < s.errorRate:
		return ModeError
	case p < s.errorRate+s.rateLimitRate:
		return ModeRateLimit
	}
	return ModeNormal
}

// rateLimits says whether a 429 may answer these requests: always, unless
// the limit is confined to methods none of them carries.
func (s settings) rateLimits(reqs []request) bool {
	return len(s.limited) == 0 || slices.ContainsFunc(reqs, func(r request) bool { return confinedTo(s.limited, r.Method) })
}

// confinedTo says whether a fault confined to methods (none: to every
// method) applies to a call of method.
func confinedTo(methods []string, method string) bool {
	return len(methods) == 0 || slices.Contains(methods, method)
}

// sleep waits d; it reports false when the request must not be answered,
// because the client went away (counted, with the calls it carried) or the
// upstream is closing.
func (u *Upstream) sleep(ctx context.Context, d time.Duration, calls int) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		u.abortIfClosing()
		u.countCancelled(calls)
	case <-u.closing:
		abort()
	}
	return false
}

// abortIfClosing aborts when Close is under way: closing the connections
// also ends the request's context, and a request released by Close is not
// one its client cancelled (select picks either when both are ready).
func (u *Upstream) abortIfClosing() {
	select {
	case <-u.closing:
		abort()
	default:
	}
}

func (u *Upstream) hang(ctx context.Context, calls int) {
	u.counters.change(func(c *Counters) { c.Hanging++ })
	defer u.counters.change(func(c *Counters) { c.Hanging-- })
	select {
	case <-ctx.Done():
		u.abortIfClosing()
		u.countCancelled(calls)
	case <-u.closing:
		abort()
	}
}

// abort drops the connection without a response, as a dying node would;
// net/http recovers this panic silently.
func abort() { panic(http.ErrAbortHandler) }

// writeBody counts the status before writing, so that a client that has
// read the answer always finds it counted.
func (u *Upstream) writeBody(w http.ResponseWriter, status int, body []byte) {
	u.countStatus(status)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
