package engine_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// verdictUpstream counts, on its own side, what it did with each call: a
// fast HTTP 500 for every other eth_getBalance, an answer after 150 ms
// for the rest (unless rpcdash lets go of it first: abandoned), an answer
// at once for anything else (probes).
type verdictUpstream struct {
	srv                           *httptest.Server
	n                             atomic.Int64
	mu                            sync.Mutex
	failed, answered, abandoned   int64
	balFailed, balAnswered, inFly int64
}

func newVerdictUpstream(t *testing.T) *verdictUpstream {
	u := &verdictUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		u.add(&u.inFly, 1)
		defer u.add(&u.inFly, -1)
		w.Header().Set("Content-Type", "application/json")
		if req.Method != "eth_getBalance" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
			u.add(&u.answered, 1)
			return
		}
		if u.n.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			u.add(&u.failed, 1)
			u.add(&u.balFailed, 1)
			return
		}
		select {
		case <-time.After(150 * time.Millisecond):
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x1"}`, req.ID)
			u.add(&u.answered, 1)
			u.add(&u.balAnswered, 1)
		case <-r.Context().Done():
			u.add(&u.abandoned, 1)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *verdictUpstream) add(p *int64, d int64) { u.mu.Lock(); *p += d; u.mu.Unlock() }

func (u *verdictUpstream) counts() (failed, answered, abandoned, balFailed, balAnswered, inFly int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.failed, u.answered, u.abandoned, u.balFailed, u.balAnswered, u.inFly
}

// ERR% is the share of an endpoint's attempts that failed among those that
// reached a verdict (answered, failed, 429): an attempt rpcdash let go of
// because another endpoint answered first says nothing of the endpoint's
// errors. Counting those in the denominator showed an endpoint failing
// every call it finished at about half that, beside its hedges.
func TestRates_ErrorRateLeavesOutCancelledLosers(t *testing.T) {
	t.Parallel()
	up := newVerdictUpstream(t)
	h := newHarness(t, func(c *engine.Config) {
		hedgeOn("0s")(c) // every read races both endpoints at once
		c.Hedge.Budget = 1
		c.Hedge.BudgetBurst = 1000
		c.Breaker.Failures = 1000 // keep the failing endpoint in the pool
		c.Endpoints[1].URL = up.srv.URL
	}, sim.Config{Latency: fixed(20 * time.Millisecond)}, sim.Config{})
	for i := 0; i < 40; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	// Every attempt of s1 ended, on both sides.
	var st engine.Snapshot
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, _, _, _, _, inFly := up.counts()
		st = h.status()
		ep := st.Endpoints[1]
		if inFly == 0 && ep.InFlight == 0 && ep.Rates.Attempts == ep.Rates.Successes+ep.Rates.Failures+ep.Rates.Cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("s1 still busy: upstream in flight %d, %+v", inFly, ep.Rates)
		}
	}
	failed, answered, abandoned, balFailed, balAnswered, _ := up.counts()
	if failed == 0 || abandoned == 0 {
		t.Fatalf("the test needs failures and abandoned calls at s1: failed %d, answered %d, abandoned %d", failed, answered, abandoned)
	}
	want := float64(failed) / float64(failed+answered)
	ep := st.Endpoints[1]
	if math.Abs(ep.Rates.ErrorRate-want) > 1e-9 {
		t.Fatalf("s1 error rate shown %.1f%%; its upstream failed %d of the %d calls it finished (%.1f%%), and %d more were abandoned by rpcdash (rates %+v)",
			100*ep.Rates.ErrorRate, failed, failed+answered, 100*want, abandoned, ep.Rates)
	}
	wantBal := float64(balFailed) / float64(balFailed+balAnswered)
	if got := ep.Methods["eth_getBalance"].Rates.ErrorRate; math.Abs(got-wantBal) > 1e-9 {
		t.Fatalf("s1 eth_getBalance error rate %.1f%%, its upstream failed %d of %d (%.1f%%)", 100*got, balFailed, balFailed+balAnswered, 100*wantBal)
	}
	m := regexp.MustCompile(`(?m)^rpcdash_endpoint_error_rate\{endpoint="s1"\} (\S+)$`).FindStringSubmatch(h.scrape())
	if m == nil {
		t.Fatal("no rpcdash_endpoint_error_rate for s1")
	}
	if got, _ := strconv.ParseFloat(m[1], 64); math.Abs(got-want) > 1e-9 {
		t.Fatalf("/metrics error rate %v, want %v", got, want)
	}
	t.Logf("s1: upstream failed %d, answered %d, abandoned %d: error rate %.1f%% (attempts %d, cancelled %d)",
		failed, answered, abandoned, 100*ep.Rates.ErrorRate, ep.Rates.Attempts, ep.Rates.Cancelled)
}
