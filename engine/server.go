package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Response headers on every proxied answer.
const (
	HeaderEndpoint = "X-Rpcdash-Endpoint"
	HeaderAttempts = "X-Rpcdash-Attempts"
	HeaderHedged   = "X-Rpcdash-Hedged"
)

// RPCHandler serves the local JSON-RPC port: POST bodies on any path, and
// GET /healthz.
func (e *Engine) RPCHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			e.serveHealth(w)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeRPCError(w, http.StatusMethodNotAllowed, &Error{Code: CodeInvalidRequest, Message: "JSON-RPC requests must be HTTP POST"})
			return
		}
		e.serveRPC(w, r)
	})
}

func (e *Engine) serveHealth(w http.ResponseWriter) {
	var routable []string
	now := e.now()
	for _, ep := range e.endpoints {
		if e.routable(ep, now) {
			routable = append(routable, ep.Name)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	status := http.StatusOK
	if len(routable) == 0 {
		status = http.StatusServiceUnavailable
	}
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"ok":%v,"routable":%d,"endpoints":%d}`+"\n", len(routable) > 0, len(routable), len(e.endpoints))
}

func writeRPCError(w http.ResponseWriter, status int, err *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(AppendError(nil, nil, err))
}

func (e *Engine) serveRPC(w http.ResponseWriter, r *http.Request) {
	start := e.now()
	// The body is not pooled: requests alias it, and a cancelled attempt's
	// transport may still be reading it after the handler has returned.
	raw, err := readBody(w, r, e.cfg.Server.MaxBodyBytes)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, &Error{Code: CodeInvalidRequest,
				Message: fmt.Sprintf("request body exceeds server.max_body_bytes (%d bytes)", e.cfg.Server.MaxBodyBytes)})
			return
		}
		writeRPCError(w, http.StatusBadRequest, &Error{Code: CodeParseError, Message: "could not read request body"})
		return
	}
	n := e.inflight.Add(1)
	e.hedge.updatePause(n)
	defer func() { e.hedge.updatePause(e.inflight.Add(-1)) }()

	ctx, cancel := context.WithTimeout(r.Context(), e.cfg.Server.RequestTimeout)
	defer cancel()

	body, perr := ParseBody(raw)
	if perr != nil {
		writeRPCError(w, http.StatusOK, perr)
		return
	}
	if !body.Batch {
		e.serveSingle(ctx, w, body.Elements[0], start)
		return
	}
	if len(body.Elements) > e.cfg.Server.MaxBatch {
		writeRPCError(w, http.StatusOK, &Error{Code: CodeBatchTooLarge,
			Message: fmt.Sprintf("batch of %d requests exceeds server.max_batch (%d)", len(body.Elements), e.cfg.Server.MaxBatch)})
		return
	}
	e.serveBatch(ctx, w, body.Elements, start)
}

func (e *Engine) serveSingle(ctx context.Context, w http.ResponseWriter, el Element, start time.Time) {
	if el.Err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Write(AppendError(nil, el.ID, el.Err))
		return
	}
	res := e.serveOne(ctx, el.Req, start)
	defer putBuf(res.body)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	setResultHeaders(h, res.endpointName(), res.attempts, res.hedged)
	if el.Req.IsNotification() {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if res.err != nil {
		w.Write(AppendError(nil, el.Req.ID, res.err))
		return
	}
	w.Write(res.body.Bytes())
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

// serveBatch runs every element on its own (each by its own method class)
// and answers in request order. X-Rpcdash-Endpoint lists the endpoints that
// answered, in element order without repeats.
func (e *Engine) serveBatch(ctx context.Context, w http.ResponseWriter, els []Element, start time.Time) {
	results := make([]result, len(els))
	var wg sync.WaitGroup
	for i, el := range els {
		if el.Err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.serveOne(ctx, el.Req, start)
		}()
	}
	wg.Wait()
	parts := make([][]byte, len(els))
	var names []string
	attempts, hedged := 0, false
	for i, el := range els {
		res := results[i]
		attempts += res.attempts
		hedged = hedged || res.hedged
		if name := res.endpointName(); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
		switch {
		case el.Err != nil:
			parts[i] = AppendError(nil, el.ID, el.Err)
		case el.Req.IsNotification():
		case res.err != nil:
			parts[i] = AppendError(nil, el.Req.ID, res.err)
		default:
			parts[i] = res.body.Bytes()
		}
	}
	out := AppendBatch(nil, parts)
	for _, res := range results {
		putBuf(res.body)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	setResultHeaders(h, strings.Join(names, ","), attempts, hedged)
	if allNotifications(els) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Write(out)
}

func allNotifications(els []Element) bool {
	for _, el := range els {
		if el.Err != nil || !el.Req.IsNotification() {
			return false
		}
	}
	return true
}

// readBody reads the request body in one allocation when its length is
// announced, within limit either way.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}
