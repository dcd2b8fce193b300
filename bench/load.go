package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Response headers the engine sets on every proxied answer.
const (
	HeaderEndpoint = engine.HeaderEndpoint
	HeaderAttempts = engine.HeaderAttempts
	HeaderHedged   = engine.HeaderHedged
)

// Load is one row of open-loop traffic: the workload sent to URL (and the
// control tenant's share to ControlURLs, in turn).
type Load struct {
	Workload
	URL string // loopback unless AllowRemote
	// Method and Params are a one-method shorthand for Mix; Params, when
	// set, are sent with every call instead of unique ones.
	Method string
	Params json.RawMessage

	ControlURLs []string
	Row         int // keeps params unique across the rows of a run
	AllowRemote bool
	// Client is used when set (the caller closes its idle connections);
	// otherwise Run uses its own keep-alive client and closes it.
	Client *http.Client
	// OnStart is called with the schedule's origin just before the first
	// send; OnMeasure, in its own goroutine, when the measured span begins
	// (Run waits for it before it returns).
	OnStart   func(origin time.Time)
	OnMeasure func()
}

// Sample is what happened to one call.
type Sample struct {
	Op       int           // the operation it belongs to
	Control  bool          // sent as the control tenant
	Warm     bool          // part of the warm-up, not measured
	Method   string        //
	Offset   time.Duration // the operation's scheduled send time from the row's origin
	SendLag  time.Duration // how late the generator actually sent it
	Latency  time.Duration // completion (body read) minus scheduled send
	Status   int           // HTTP status; 0 when there was no answer
	RPCError bool          // the body carried a JSON-RPC error object
	Message  string        // that error's message, cut to 200 bytes
	Err      string        // no usable answer: transport failure or timeout
	Timeout  bool          // no answer within the timeout (or the run was cancelled)
	Endpoint string
	Attempts int // X-Rpcdash-Attempts; 0 without the header
	Hedged   bool
}

// OK is an HTTP 200 answer without a JSON-RPC error.
func (s Sample) OK() bool { return s.Err == "" && s.Status == http.StatusOK && !s.RPCError }

// Outcome classes of a call.
const (
	OutcomeOK         = "ok"
	OutcomeRPCError   = "rpc_error"  // an answer carrying a JSON-RPC error
	OutcomeTransport  = "transport"  // no usable answer: connection failure, HTTP error without a JSON-RPC body
	OutcomeIncomplete = "incomplete" // no answer within the timeout
)

// Outcome classifies the call.
func (s Sample) Outcome() string {
	switch {
	case s.Timeout:
		return OutcomeIncomplete
	case s.OK():
		return OutcomeOK
	case s.Err == "" && s.RPCError:
		return OutcomeRPCError
	}
	return OutcomeTransport
}

// Result is a finished row.
type Result struct {
	Samples []Sample // in schedule order; only calls that were sent
	Planned int      // calls in the schedule
	Elapsed time.Duration
}

const defaultTimeout = 10 * time.Second

// NewClient is a keep-alive client sized for open-loop load (one idle
// connection per request in flight, no proxy).
func NewClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        2048,
		MaxIdleConnsPerHost: 2048,
		IdleConnTimeout:     30 * time.Second,
	}}
}

// Run sends l's schedule and waits for every answer or timeout. If ctx ends
// first, calls not yet sent are left out and ctx's error returned with what
// was measured.
func Run(ctx context.Context, l Load) (*Result, error) {
	if l.Method != "" && len(l.Mix) == 0 {
		l.Mix = Mix{{Method: l.Method, Weight: 1}}
	}
	if len(l.Mix) == 0 {
		return nil, errors.New("bench: no JSON-RPC method")
	}
	for _, u := range append([]string{l.URL}, l.ControlURLs...) {
		if err := checkTarget(u, l.AllowRemote); err != nil {
			return nil, err
		}
	}
	ops, err := l.plan()
	if err != nil {
		return nil, err
	}
	client := l.Client
	if client == nil {
		client = NewClient()
		defer client.CloseIdleConnections()
	}
	timeout := l.timeout()
	planned := 0
	for _, o := range ops {
		planned += len(o.calls)
	}
	samples := make([]Sample, 0, planned)
	var mu sync.Mutex // guards samples
	var wg sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	start := time.Now()
	if l.OnStart != nil {
		l.OnStart(start)
	}
	measuring := false
dispatch:
	for i, o := range ops {
		at := start.Add(o.at)
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break dispatch
			}
		} else if ctx.Err() != nil {
			break dispatch
		}
		if !o.warm && !measuring && l.OnMeasure != nil {
			measuring = true
			wg.Go(l.OnMeasure)
		}
		lag := time.Since(at)
		// One goroutine per call, never waiting for earlier answers: this
		// is what makes the load open-loop.
		if l.Batch {
			wg.Go(func() {
				ss := sendBatch(ctx, client, o.calls, at, timeout)
				for k := range ss {
					ss[k].Op, ss[k].Control, ss[k].Warm, ss[k].Offset, ss[k].SendLag = i, o.control, o.warm, o.at, lag
				}
				mu.Lock()
				samples = append(samples, ss...)
				mu.Unlock()
			})
			continue
		}
		for _, c := range o.calls {
			wg.Go(func() {
				s := send(ctx, client, c, at, timeout)
				s.Op, s.Control, s.Warm, s.Offset, s.SendLag = i, o.control, o.warm, o.at, lag
				mu.Lock()
				samples = append(samples, s)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	shownFailures(samples, append([]string{l.URL}, l.ControlURLs...))
	sortSamples(samples)
	return &Result{Samples: samples, Planned: planned, Elapsed: time.Since(start)}, ctx.Err()
}

// sortSamples puts samples in schedule order.
func sortSamples(s []Sample) {
	slices.SortStableFunc(s, func(a, b Sample) int { return cmp.Compare(a.Op, b.Op) })
}

// requestBody is one request of the run; method is already JSON-encoded.
func requestBody(id int, method []byte, params json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(len(method) + len(params) + 48)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(strconv.Itoa(id))
	b.WriteString(`,"method":`)
	b.Write(method)
	b.WriteString(`,"params":`)
	b.Write(params)
	b.WriteString("}")
	return b.Bytes()
}

// send posts one call; its deadline counts from the scheduled time.
func send(ctx context.Context, c *http.Client, cl call, at time.Time, timeout time.Duration) Sample {
	s, b := post(ctx, c, cl.url, cl.body, at, timeout)
	s.Method = cl.method
	if s.Err == "" {
		s.judge(b)
	}
	return s
}

// sendBatch posts an operation's calls as one JSON-RPC batch: each call's
// sample has the batch's latency, status and headers and its own answer's
// error; the batch's X-Rpcdash-Attempts is shared out among them.
func sendBatch(ctx context.Context, c *http.Client, calls []call, at time.Time, timeout time.Duration) []Sample {
	var body bytes.Buffer
	body.WriteByte('[')
	for k, cl := range calls {
		if k > 0 {
			body.WriteByte(',')
		}
		body.Write(cl.body)
	}
	body.WriteByte(']')
	base, b := post(ctx, c, calls[0].url, body.Bytes(), at, timeout)
	var parts []json.RawMessage
	whole := base.Err == "" && json.Unmarshal(b, &parts) == nil && len(parts) == len(calls)
	out := make([]Sample, len(calls))
	for k, cl := range calls {
		s := base
		s.Method = cl.method
		s.Attempts = base.Attempts / len(calls)
		if k < base.Attempts%len(calls) {
			s.Attempts++
		}
		switch {
		case s.Err != "":
		case !whole:
			s.Err = fmt.Sprintf("HTTP %d without one answer for each of the batch's %d calls", s.Status, len(calls))
		default:
			s.judge(parts[k])
		}
		out[k] = s
	}
	return out
}

// post sends body and reads the answer, whose deadline counts from the
// scheduled time: the sample without its method and verdict, and the body.
func post(ctx context.Context, c *http.Client, url string, body []byte, at time.Time, timeout time.Duration) (Sample, []byte) {
	ctx, cancel := context.WithDeadline(ctx, at.Add(timeout))
	defer cancel()
	var s Sample
	fail := func(err error) (Sample, []byte) {
		s.Latency, s.Err = time.Since(at), err.Error()
		s.Timeout = ctx.Err() != nil
		if s.Timeout {
			s.Err = fmt.Sprintf("no answer within %s", timeout)
		}
		return s, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return fail(fmt.Errorf("read body: %w", err))
	}
	s.Latency = time.Since(at)
	s.Status = resp.StatusCode
	s.Endpoint = resp.Header.Get(HeaderEndpoint)
	s.Attempts, _ = strconv.Atoi(resp.Header.Get(HeaderAttempts))
	s.Hedged = resp.Header.Get(HeaderHedged) == "1"
	return s, b
}

// judge sets the sample's verdict from its answer b.
func (s *Sample) judge(b []byte) {
	switch isRPC, msg, hasErr := inspectAnswer(b); {
	case !isRPC:
		s.Err = fmt.Sprintf("HTTP %d without a JSON-RPC answer", s.Status)
	case hasErr:
		s.RPCError, s.Message = true, msg
	case s.Status != http.StatusOK:
		s.Err = fmt.Sprintf("HTTP %d", s.Status)
	}
}

// maxAnswerBytes bounds what bench reads of one answer.
const maxAnswerBytes = 16 << 20

// inspectAnswer says whether body is a JSON-RPC answer and whether it
// carries an error object, with the error's message cut to 200 bytes.
func inspectAnswer(body []byte) (isRPC bool, message string, hasErr bool) {
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || (m.Result == nil && m.Error == nil) {
		return false, "", false
	}
	if len(m.Error) == 0 || string(m.Error) == "null" {
		return true, "", false
	}
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(m.Error, &e)
	return true, e.Message[:min(len(e.Message), 200)], true
}
