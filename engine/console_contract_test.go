package engine_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// What the console reads from a Snapshot, pinned through the real port.

func TestSeries_CountsEachSecondOfAnEndpoint(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(20 * time.Millisecond)})
	const n = 30
	parallel(n, 4, func(i int) { mustOK(t, h.call(i, "eth_getBalance", addr, "latest")) })
	mustInject(t, h, "s0", `{"mode":"error","duration":"1m"}`)
	h.call(99, "eth_getBalance", addr, "latest") // fails: one failure
	// The series shows complete seconds only: let the clock pass into the
	// next second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	ep := h.endpoint("s0")
	if len(ep.Series) != engine.SeriesLength {
		t.Fatalf("series of %d points, want %d", len(ep.Series), engine.SeriesLength)
	}
	var reqs, fails, answers int64
	var maxRTT time.Duration
	for i, p := range ep.Series {
		if i > 0 && p.Start.Sub(ep.Series[i-1].Start) != time.Second {
			t.Fatalf("points %d and %d are not a second apart", i-1, i)
		}
		reqs += p.Requests
		fails += p.Failures
		answers += p.Answers
		maxRTT = max(maxRTT, p.MaxRTT)
		if p.Answers > 0 && (p.MeanRTT < 20*time.Millisecond || p.MeanRTT > p.MaxRTT) {
			t.Errorf("second %s: mean RTT %s, max %s for a 20ms upstream", p.Start, p.MeanRTT, p.MaxRTT)
		}
	}
	if answers != n || fails != 1 || reqs != n+1 {
		t.Fatalf("series counted %d attempts, %d answers, %d failures; want %d, %d, 1", reqs, answers, fails, n+1, n)
	}
	if last := ep.Series[len(ep.Series)-1]; !last.Start.Add(time.Second).After(ep.Series[0].Start.Add(59 * time.Second)) {
		t.Fatalf("series ends at %s", last.Start)
	}
	t.Logf("%d attempts, max RTT %s", reqs, maxRTT)
}

// An endpoint sent only upstream batches (probes off, as in the harness)
// shows them in its series, each round trip one answered attempt: the
// console's sparkline was blank, which it says means no traffic.
func TestSeries_CountsUpstreamBatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, sim.Config{Latency: fixed(20 * time.Millisecond)})
	const n = 5
	for range n {
		if r := h.post(balanceBatch(10, strconv.Itoa)); r.status != http.StatusOK {
			t.Fatalf("HTTP %d", r.status)
		}
	}
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	var reqs, answers int64
	for _, p := range h.endpoint("s0").Series {
		reqs += p.Requests
		answers += p.Answers
		if p.Answers > 0 && p.MeanRTT < 20*time.Millisecond {
			t.Errorf("second %s: mean RTT %s for a 20ms upstream", p.Start, p.MeanRTT)
		}
	}
	if reqs != n || answers != n {
		t.Fatalf("series counted %d attempts, %d answers for %d upstream batches", reqs, answers, n)
	}
}

func TestSnapshot_ClientStatsOfTheLastMinute(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(15 * time.Millisecond)}, sim.Config{Latency: fixed(15 * time.Millisecond)})
	const n = 40
	parallel(n, 4, func(i int) { mustOK(t, h.call(i, "eth_getBalance", addr, "latest")) })
	mustOK(t, h.call(0, "eth_sendRawTransaction", "0x01"))
	st := h.status()
	if st.Client.Requests != n+1 || st.Client.PerSecond <= 0 || st.Client.P50 < 15*time.Millisecond || st.Client.P99 < st.Client.P50 {
		t.Fatalf("pool client stats %+v after %d requests of 15ms", st.Client, n+1)
	}
	m := st.Methods["eth_getBalance"]
	if m.Client.Requests != n || m.Class != jsonrpc.ClassRead || !m.Hedgeable || m.Hedge == nil {
		t.Fatalf("eth_getBalance: %+v", m)
	}
	if w := st.Methods["eth_sendRawTransaction"]; w.Class != jsonrpc.ClassWrite || w.Hedgeable || w.Hedge != nil || w.Client.Requests != 1 {
		t.Fatalf("eth_sendRawTransaction: %+v", w)
	}
	if st.Started.IsZero() || !st.Started.Before(st.Time) {
		t.Fatalf("started %s, time %s", st.Started, st.Time)
	}
	if st.Hedge.BudgetBurst != 10 {
		t.Fatalf("budget burst %v, want the default 10", st.Hedge.BudgetBurst)
	}
}

func TestScore_PartsAddUpToTheRoutersCostAndOrder(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(5 * time.Millisecond)}, sim.Config{Latency: fixed(60 * time.Millisecond)})
	// Warm both endpoints past the router's minimum samples.
	for i := range 60 {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	st := h.status()
	fast, slow := st.Endpoints[0], st.Endpoints[1]
	for _, ep := range st.Endpoints {
		for _, p := range []engine.ScoreParts{ep.Score, ep.Methods["eth_getBalance"].Score} {
			want := time.Duration((float64(p.Latency)+float64(10*time.Microsecond))*p.ErrorFactor*p.LoadFactor) + p.LagCost
			if d := p.Cost - want; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("%s: cost %s is not its parts %+v", ep.Name, p.Cost, p)
			}
			if p.LatencySource == "" || p.ErrorFactor < 1 || p.LoadFactor < 1 {
				t.Errorf("%s: parts %+v", ep.Name, p)
			}
		}
	}
	if fast.Score.Cost >= slow.Score.Cost || fast.Score.Latency >= slow.Score.Latency {
		t.Fatalf("fast %+v does not rank before slow %+v", fast.Score, slow.Score)
	}
	// The router sends most reads to the endpoint the parts rank first.
	if fast.Accounting.Primary <= slow.Accounting.Primary {
		t.Fatalf("router sent %d to fast, %d to slow, against the score", fast.Accounting.Primary, slow.Accounting.Primary)
	}
}

func TestEvents_NameWhoDidEachControlAction(t *testing.T) {
	h := newHarness(t, nil, sim.Config{}, sim.Config{})
	if code, b := h.adminDo("POST", "/v1/endpoints/s0/drain", ""); code != 200 {
		t.Fatalf("drain: %d %s", code, b)
	}
	req := h.mustRequest("POST", "/v1/endpoints/s0/undrain", "")
	req.Header.Set("X-Rpcdash-Actor", "console")
	h.mustDo(req)
	if err := h.eng.InjectFault(engine.ActorConsole, "s1", engine.FaultSpec{Mode: engine.FaultError, Duration: engine.Duration(50 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	req = h.mustRequest("PUT", "/v1/hedge", `{"enabled":false}`)
	req.Header.Set("X-Rpcdash-Actor", "engine") // not claimable from outside
	h.mustDo(req)
	testutil.WaitUntil(t, 5*time.Second, "the fault to expire", func() bool { return h.endpoint("s1").Fault == nil })
	testutil.WaitUntil(t, 5*time.Second, "the expiry event", func() bool {
		evs := h.events()
		return strings.Contains(evs[len(evs)-1].Message, "expired")
	})
	var got []string
	for _, ev := range h.events() {
		if ev.Type != engine.EventPool {
			got = append(got, string(ev.Actor)+":"+ev.Message)
		}
	}
	want := []string{"admin:drained", "console:undrained", "console:fault injected", "admin:hedging", "engine:fault expired"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("event %d is %q, want %q…", i, got[i], want[i])
		}
	}
}

func TestSnapshot_ReadsAnExpiredFaultAsNoneAndChangesNothing(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg := baseConfig()
	cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
	e, err := engine.New(cfg, engine.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.InjectFault(engine.ActorAdmin, "a", engine.FaultSpec{Mode: engine.FaultError, Duration: engine.Duration(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if f := e.Snapshot().Endpoints[0].Fault; f == nil || !f.Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("fault %+v", f)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour) // past its end; its timer (real time) has not fired
	mu.Unlock()
	before := len(e.Events(0))
	for range 3 {
		if f := e.Snapshot().Endpoints[0].Fault; f != nil {
			t.Fatalf("an expired fault still shows: %+v", f)
		}
	}
	if n := len(e.Events(0)); n != before {
		t.Fatalf("Snapshot added %d events", n-before)
	}
}

func TestHedge_AllMethodsUpdateClearsLiveOverridesOnly(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Hedge.Enabled = true
		c.Hedge.Methods = map[string]engine.HedgeMethodConfig{"eth_call": {Delay: "30ms"}}
	}, sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	mustOK(t, h.call(2, "eth_call", map[string]string{"to": addr}, "latest"))
	mustOK(t, h.call(3, "eth_blockNumber"))
	for _, body := range []string{`{"method":"eth_getBalance","delay":"20ms"}`, `{"method":"eth_blockNumber","enabled":false}`} {
		if code, b := h.adminDo("PUT", "/v1/hedge", body); code != 200 {
			t.Fatalf("%s: %d %s", body, code, b)
		}
	}
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"delay":"75ms","all_methods":true}`); code != 200 {
		t.Fatalf("all methods: %d %s", code, b)
	}
	st := h.status()
	delays := map[string]string{}
	for m, ms := range st.Methods {
		delays[m] = ms.Hedge.Delay.String() + " " + ms.Hedge.DelaySource
	}
	if delays["eth_getBalance"] != "75ms live" || delays["eth_call"] != "30ms config" {
		t.Fatalf("delays after an all-methods update: %v", delays)
	}
	if st.Methods["eth_blockNumber"].Hedge.Enabled {
		t.Fatalf("a live per-method setting of another kind (enabled) was cleared")
	}
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"enabled":true,"all_methods":true}`); code != 200 || !h.status().Methods["eth_blockNumber"].Hedge.Enabled {
		t.Fatalf("enabled for all methods: %d %s", code, b)
	}
	if code, b := h.adminDo("PUT", "/v1/hedge", `{"method":"eth_call","delay":"1ms","all_methods":true}`); code != 400 || !strings.Contains(string(b), "all_methods") {
		t.Fatalf("method and all_methods together: %d %s", code, b)
	}
	evs := h.events()
	if last := evs[len(evs)-1]; !strings.Contains(last.Message, "all methods") {
		t.Fatalf("last event %q", last.Message)
	}
}

func TestSnapshot_KeepsTheLastErrorsNewestFirst(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Breaker.Failures = 100 }, sim.Config{})
	mustInject(t, h, "s0", `{"mode":"error"}`)
	for i := range 7 {
		h.call(i, "eth_getBalance", addr, "latest")
	}
	ep := h.endpoint("s0")
	if len(ep.Errors) != 5 {
		t.Fatalf("%d errors kept, want the last 5", len(ep.Errors))
	}
	for i, e := range ep.Errors {
		if !strings.Contains(e.Text, "HTTP 500") || (i > 0 && e.Time.After(ep.Errors[i-1].Time)) {
			t.Fatalf("errors %+v: want HTTP 500s, newest first", ep.Errors)
		}
	}
	if ep.LastError != ep.Errors[0].Text {
		t.Fatalf("last_error %q is not the newest %q", ep.LastError, ep.Errors[0].Text)
	}
}

func TestDemo_SendsReadsThroughTheRPCPortUntilShutdown(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Demo.Enabled = true
		c.Demo.Rate = 100
		c.Demo.Mix = []string{"eth_blockNumber:2", "eth_getBalance"}
	}, sim.Config{}, sim.Config{})
	testutil.WaitUntil(t, 5*time.Second, "demo traffic", func() bool { return h.status().Totals.Requests >= 30 })
	st := h.status()
	if !st.Demo.Enabled || st.Demo.Rate != 100 {
		t.Fatalf("demo status %+v", st.Demo)
	}
	for m, ms := range st.Methods {
		if m != "eth_blockNumber" && m != "eth_getBalance" {
			t.Fatalf("demo sent %s", m)
		}
		if ms.ClientErrors != 0 {
			t.Fatalf("demo %s got %d errors", m, ms.ClientErrors)
		}
	}
	// Close (the harness's cleanup) stops it; goleak checks nothing is left.
}

func TestDemo_MixIsValidatedNamingTheKey(t *testing.T) {
	for _, mix := range [][]string{{"eth_sendRawTransaction"}, {"eth_call:0"}, {":2"}} {
		cfg := baseConfig()
		cfg.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"}}
		cfg.Demo.Enabled, cfg.Demo.Mix = true, mix // the mix is read only when the demo runs
		if _, err := engine.New(cfg, engine.Options{}); err == nil || !strings.Contains(err.Error(), "demo.mix") {
			t.Errorf("mix %q: %v", mix, err)
		}
	}
}

func mustInject(t *testing.T, h *harness, name, body string) {
	t.Helper()
	if code, b := h.adminDo("POST", "/v1/endpoints/"+name+"/fault", body); code != 200 {
		t.Fatalf("fault: %d %s", code, b)
	}
}
