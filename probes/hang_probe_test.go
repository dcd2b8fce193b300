package probes

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// With probes running, half-open trials are probes: once a hung endpoint's
// breaker opens, client reads never reach it again, trials or not.
func TestHang_WithProbesClientReadsStopWithinTwoSeconds(t *testing.T) {
	normal := sim.Latency{Median: 50 * time.Millisecond, Sigma: 0.1}
	r := newRig(t, func(c *engine.Config) {
		c.Breaker.Cooldown = 500 * time.Millisecond
		c.Probes.Interval = 200 * time.Millisecond
	}, sim.Config{Latency: normal}, sim.Config{Latency: normal}, sim.Config{Latency: normal})
	hung := r.sims[0]

	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	start := time.Now()
	var faultAt time.Time
	var atPlus2s int64 = -1
	tick := time.NewTicker(10 * time.Millisecond) // 100 reads/s, open loop
	defer tick.Stop()
	for i := 0; time.Since(start) < 8*time.Second; i++ {
		<-tick.C
		switch {
		case faultAt.IsZero() && time.Since(start) >= 2*time.Second:
			faultAt = time.Now()
			hung.SetMode(sim.ModeHang)
		case !faultAt.IsZero() && atPlus2s < 0 && time.Since(faultAt) >= 2*time.Second:
			atPlus2s = hung.MethodCount("eth_getBalance")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, err := postRPC(r.client, r.rpc, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00000000000000000000000000000000000000aa","latest"]}`)
			if err != nil || !strings.Contains(body, `"result"`) {
				mu.Lock()
				failed = append(failed, fmt.Sprint(body, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d client errors, first: %s", len(failed), failed[0])
	}
	end := hung.MethodCount("eth_getBalance")
	if atPlus2s < 0 || end != atPlus2s {
		t.Fatalf("client reads reached the hung endpoint after +2s: %d then %d", atPlus2s, end)
	}
	trials := 0
	for _, ev := range r.eng.Events(0) {
		if ev.Endpoint == "s0" && ev.To == "half-open" {
			trials++
		}
	}
	if trials == 0 {
		t.Fatal("no half-open trial happened: the test did not exercise probe trials")
	}
	t.Logf("hung endpoint: %d client reads in all, none after +2s; %d probe trials", end, trials)
}

// postRPC is safe to call from any goroutine (it reports, never fails the test).
func postRPC(c *http.Client, url, body string) (string, error) {
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
