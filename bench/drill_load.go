package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// drillRead is one of the drill's own reads.
type drillRead struct {
	at       time.Time // when it ended
	endpoint string    // who answered
	method   string
	attempts int
	ok       bool
	err      string // what the client saw when it failed
}

// drillLoad is the drill's own light read load: one read at a time (so at
// most one of its attempts is in flight on any endpoint), at most rate per
// second, alternating a balance at the tip and the head itself, both reads
// that depend on the tip (a stale endpoint must be cut out of them).
type drillLoad struct {
	url    string
	shown  engine.TextScrubber // of url's secrets
	client *http.Client
	rate   float64
	seed   int64

	mu    sync.Mutex
	reads []drillRead
	wake  chan struct{} // closed and replaced on every read
}

func newDrillLoad(url string, client *http.Client, rate float64, seed int64) *drillLoad {
	return &drillLoad{url: url, shown: engine.NewTextScrubber([]string{url}), client: client, rate: rate, seed: seed, wake: make(chan struct{})}
}

// run sends reads until ctx ends.
func (l *drillLoad) run(ctx context.Context) {
	gap := time.Duration(float64(time.Second) / l.rate)
	balance, _ := json.Marshal("eth_getBalance")
	head, _ := json.Marshal("eth_blockNumber")
	next := time.Now()
	for i := 0; ctx.Err() == nil; i++ {
		name, method, params := "eth_getBalance", balance, json.RawMessage(nil)
		if i%2 == 1 {
			name, method, params = "eth_blockNumber", head, json.RawMessage("[]")
		} else {
			params, _ = uniqueParams("eth_getBalance", l.seed, uint64(i))
		}
		r := l.read(ctx, requestBody(i, method, params))
		if ctx.Err() != nil {
			return // cut short by the drill's end, not by the endpoint
		}
		r.method = name
		l.record(r)
		next = next.Add(gap)
		if wait := time.Until(next); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		} else {
			next = time.Now()
		}
	}
}

// stopGrace is how long a read in flight as the drill ends may take to
// finish: rpcdash counts a request whose client left as a client error, and
// a drill cutting its own last read showed as one on the console.
const stopGrace = 2 * time.Second

func (l *drillLoad) read(ctx context.Context, body []byte) (r drillRead) {
	// What a failed read says goes into the drill's report: Go's error
	// quotes the --target URL, path and all.
	defer func() { r.err = l.shown.Shown(r.err) }()
	stopped := ctx
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	stopWatch := context.AfterFunc(stopped, func() {
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case <-grace.C:
			cancel()
		case <-ctx.Done():
		}
	})
	defer stopWatch()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return drillRead{at: time.Now(), err: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return drillRead{at: time.Now(), err: err.Error()}
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(io.LimitReader(resp.Body, maxAnswerBytes))
	r = drillRead{at: time.Now(), endpoint: resp.Header.Get(HeaderEndpoint)}
	r.attempts, _ = strconv.Atoi(resp.Header.Get(HeaderAttempts))
	isRPC, msg, hasErr := inspectAnswer(b.Bytes())
	switch {
	case !isRPC || resp.StatusCode != http.StatusOK:
		r.err = "HTTP " + strconv.Itoa(resp.StatusCode)
	case hasErr:
		r.err = "JSON-RPC error: " + msg
	default:
		r.ok = true
	}
	return r
}

func (l *drillLoad) record(r drillRead) {
	l.mu.Lock()
	l.reads = append(l.reads, r)
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
}

// since returns the reads that ended after t.
func (l *drillLoad) since(t time.Time) []drillRead {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []drillRead
	for i := len(l.reads) - 1; i >= 0 && l.reads[i].at.After(t); i-- {
		out = append(out, l.reads[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// waitReads blocks until n reads have ended after t, or ctx ends.
func (l *drillLoad) waitReads(ctx context.Context, t time.Time, n int) []drillRead {
	for {
		l.mu.Lock()
		wake := l.wake
		l.mu.Unlock()
		if got := l.since(t); len(got) >= n {
			return got
		}
		select {
		case <-ctx.Done():
			return l.since(t)
		case <-wake:
		}
	}
}
