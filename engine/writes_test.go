package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

func TestWrites_NeverSentTwiceWhileEndpointsHangAndFail(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Server.RequestTimeout = 800 * time.Millisecond
		c.Hedge.Enabled = true // writes must stay unhedged even so
	}, sim.Config{}, sim.Config{}, sim.Config{})
	h.sims[0].SetMode(sim.ModeHang)
	h.sims[1].SetMode(sim.ModeError)

	const n = 200
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				h.call(i, "eth_sendRawTransaction", fmt.Sprintf("0x%064x", i))
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()

	seen := map[string]int{}
	total := 0
	for _, s := range h.sims {
		for _, p := range s.Submissions() {
			seen[p]++
			total++
		}
	}
	if total > n {
		t.Fatalf("sims saw %d submissions for %d writes", total, n)
	}
	for p, c := range seen {
		if c > 1 {
			t.Fatalf("payload %s submitted %d times", p, c)
		}
	}
	if st := h.status(); st.Totals.Hedge != 0 || st.Totals.Failover != 0 {
		t.Fatalf("writes were hedged (%d) or failed over (%d)", st.Totals.Hedge, st.Totals.Failover)
	}
	t.Logf("%d submissions reached the sims: %d", n, total)
}

func TestWrites_FailOverOnlyWhenConnectionRefused(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		// First endpoint: a port nothing listens on.
		c.Endpoints = append([]engine.EndpointConfig{{Name: "dead", URL: "http://127.0.0.1:1"}}, c.Endpoints...)
	}, sim.Config{})
	r := h.call(1, "eth_sendRawTransaction", "0x01")
	mustOK(t, r)
	if r.endpoint != "s0" || r.attempts != 2 {
		t.Fatalf("answered by %s after %d attempts; want s0 after a refused connection", r.endpoint, r.attempts)
	}
	if got := len(h.sims[0].Submissions()); got != 1 {
		t.Fatalf("sim saw %d submissions", got)
	}
}

func TestWrites_AvoidSlowEndpoint(t *testing.T) {
	h := newHarness(t, nil,
		sim.Config{Latency: fixed(10 * time.Millisecond)},
		sim.Config{Latency: fixed(760 * time.Millisecond)},
		sim.Config{Latency: fixed(10 * time.Millisecond)})
	const n = 60
	for i := 0; i < n; i++ {
		mustOK(t, h.call(i, "eth_sendRawTransaction", fmt.Sprintf("0x%064x", i)))
	}
	slow := len(h.sims[1].Submissions())
	total := slow + len(h.sims[0].Submissions()) + len(h.sims[2].Submissions())
	if total != n {
		t.Fatalf("%d submissions for %d writes", total, n)
	}
	if slow > n/10 {
		t.Fatalf("slow endpoint took %d of %d writes", slow, n)
	}
	t.Logf("slow endpoint took %d of %d writes", slow, n)
}

// A client that goes away after handing a write over does not take the write
// with it: sent to a node directly, the write would have arrived. The fault
// holds the attempt before it is sent, as a slow connection to a remote
// endpoint does.
func TestWrites_SentWhenTheClientLeavesBeforeItGoesOut(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	if err := h.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: engine.FaultLatency, Latency: engine.Duration(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	inFlight := func() int64 { return h.eng.Snapshot().Endpoints[0].InFlight }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	left := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.rpc,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x01"]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := h.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		left <- err
	}()
	testutil.WaitUntil(t, 5*time.Second, "the write's attempt to start", func() bool { return inFlight() == 1 })
	cancel()
	if err := <-left; err == nil {
		t.Fatal("the client got an answer before it left; the test needs the attempt held")
	}
	testutil.WaitUntil(t, 5*time.Second, "the write's attempt to end", func() bool { return inFlight() == 0 })
	if got := h.sims[0].Submissions(); len(got) != 1 {
		t.Fatalf("the endpoint saw %d submissions of the write the client handed over, want 1", len(got))
	}
}
