package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Response headers the engine sets on every proxied answer.
const (
	HeaderEndpoint = "X-Rpcdash-Endpoint"
	HeaderAttempts = "X-Rpcdash-Attempts"
	HeaderHedged   = "X-Rpcdash-Hedged"
)

// Load is one open-loop run against a JSON-RPC URL.
type Load struct {
	URL      string          // loopback only
	Method   string          // JSON-RPC method
	Params   json.RawMessage // nil sends []
	Rate     float64         // requests per second
	Duration time.Duration   // no request is scheduled at or after this offset
	Count    int             // at most this many requests; 0 = Rate×Duration
	Arrivals Arrivals
	Seed     int64         // the Poisson schedule's seed
	Timeout  time.Duration // per request, from its scheduled send; 0 = 10s
	// Client is used when set (the caller closes its idle connections);
	// otherwise Run uses its own keep-alive client and closes it.
	Client *http.Client
}

// Sample is what happened to one request.
type Sample struct {
	Offset   time.Duration // scheduled send time from the run's start
	SendLag  time.Duration // how late the generator actually sent it
	Latency  time.Duration // completion (body read) minus scheduled send
	Status   int           // HTTP status; 0 when there was no answer
	RPCError bool          // the body carried a JSON-RPC error
	Err      string        // no answer: transport error or timeout
	Endpoint string
	Attempts int
	Hedged   bool
}

// OK is an HTTP 200 answer without a JSON-RPC error.
func (s Sample) OK() bool { return s.Err == "" && s.Status == http.StatusOK && !s.RPCError }

// Result is a finished run.
type Result struct {
	Samples []Sample // in schedule order; only requests that were sent
	Planned int      // requests in the schedule
	Elapsed time.Duration
}

const defaultTimeout = 10 * time.Second

// NewClient is a keep-alive client sized for open-loop load on loopback
// (one idle connection per request in flight, no proxy).
func NewClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        2048,
		MaxIdleConnsPerHost: 2048,
		IdleConnTimeout:     30 * time.Second,
	}}
}

// Run sends the schedule of l and waits for every answer or timeout. If ctx
// ends first, requests not yet sent are left out and ctx's error returned
// with what was measured.
func Run(ctx context.Context, l Load) (*Result, error) {
	if err := checkLoopback(l.URL); err != nil {
		return nil, err
	}
	if l.Method == "" {
		return nil, errors.New("bench: no JSON-RPC method")
	}
	offsets, err := Schedule(l.Arrivals, l.Rate, l.Duration, l.Count, l.Seed)
	if err != nil {
		return nil, err
	}
	if l.Timeout <= 0 {
		l.Timeout = defaultTimeout
	}
	client := l.Client
	if client == nil {
		client = NewClient()
		defer client.CloseIdleConnections()
	}
	params := l.Params
	if len(params) == 0 {
		params = json.RawMessage("[]")
	}
	method, _ := json.Marshal(l.Method) // once, not in the timed loop

	samples := make([]Sample, len(offsets))
	var wg sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	start := time.Now()
	sent := 0
dispatch:
	for i, off := range offsets {
		at := start.Add(off)
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
		lag := time.Since(at)
		body := requestBody(i, method, params)
		sent++
		wg.Add(1)
		// One goroutine per request, never waiting for earlier answers:
		// this is what makes the load open-loop.
		go func() {
			defer wg.Done()
			s := send(ctx, client, l.URL, body, at, l.Timeout)
			s.Offset, s.SendLag = off, lag
			samples[i] = s
		}()
	}
	wg.Wait()
	return &Result{Samples: samples[:sent], Planned: len(offsets), Elapsed: time.Since(start)}, ctx.Err()
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

// send posts one request; its deadline counts from the scheduled time.
func send(ctx context.Context, c *http.Client, url string, body []byte, at time.Time, timeout time.Duration) Sample {
	ctx, cancel := context.WithDeadline(ctx, at.Add(timeout))
	defer cancel()
	var s Sample
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		s.Err = err.Error()
		return s
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		s.Latency, s.Err = time.Since(at), err.Error()
		return s
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	s.Latency = time.Since(at)
	if err != nil {
		s.Err = fmt.Sprintf("read body: %v", err)
		return s
	}
	s.Status = resp.StatusCode
	s.RPCError = hasRPCError(b)
	s.Endpoint = resp.Header.Get(HeaderEndpoint)
	s.Attempts, _ = strconv.Atoi(resp.Header.Get(HeaderAttempts))
	s.Hedged = resp.Header.Get(HeaderHedged) == "1"
	return s
}

func hasRPCError(body []byte) bool {
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil {
		return true // not a JSON-RPC response at all
	}
	return len(m.Error) > 0 && string(m.Error) != "null"
}
