package engine_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// shadowHarness: alpha a primary, beta a shadow (mirrors every read unless
// mut says otherwise).
func shadowHarness(t *testing.T, mut func(*engine.Config), alpha, beta sim.Config) *harness {
	t.Helper()
	alpha.Name, beta.Name = "alpha", "beta"
	return newHarness(t, func(c *engine.Config) {
		c.Endpoints[1].Role = engine.RoleShadow
		if mut != nil {
			mut(c)
		}
	}, alpha, beta)
}

// shadowOf is beta's comparison figures, once every mirror sent has an
// outcome (compared or dropped).
func (h *harness) settledShadow(name string, mirrored int64) *engine.ShadowSnapshot {
	h.t.Helper()
	var sh *engine.ShadowSnapshot
	testutil.WaitUntil(h.t, 10*time.Second, "the mirrors' outcomes", func() bool {
		sh = h.endpoint(name).Shadow
		return sh != nil && sh.Mirrored >= mirrored && sh.Compared+sh.Dropped >= mirrored
	})
	return sh
}

// A shadow that answers other results (another chain's balances) yields
// mismatches, while every client answer comes from the primary; the
// mismatch is an event (one per method per 10 s), the Snapshot keeps the
// method and time only, and Prometheus counts it.
func TestShadow_WrongAnswersAreMismatchesAndNeverReachAClient(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{ChainID: 1})
	const n = 30
	for i := 0; i < n; i++ {
		r := h.call(i, "eth_getBalance", addr, "0x10") // a fixed block: a difference is a mismatch
		mustOK(t, r)
		if r.endpoint != "alpha" || r.attempts != 1 {
			t.Fatalf("read %d answered by %q after %d attempts, want alpha once", i, r.endpoint, r.attempts)
		}
		if want := fmt.Sprintf(`"result":"0x%x"`, 0); strings.Contains(string(r.body), want) {
			t.Fatalf("unexpected zero balance %s", r.body)
		}
	}
	sh := h.settledShadow("beta", n)
	t.Logf("shadow: %+v", *sh)
	if sh.Mirrored != n || sh.Mismatch != n || sh.Match != 0 || sh.MatchRate != 0 || sh.LastMismatch == nil || sh.LastMismatch.Method != "eth_getBalance" {
		t.Fatalf("shadow figures %+v, want %d mirrored, all mismatches", *sh, n)
	}
	if got := h.sims[1].MethodCount("eth_getBalance"); got != n {
		t.Fatalf("beta's sim saw %d reads, want the %d mirrors", got, n)
	}
	var shadowEvents int
	for _, ev := range h.events() {
		if ev.Type == engine.EventShadow {
			shadowEvents++
			if ev.Endpoint != "beta" || !strings.Contains(ev.Message, "eth_getBalance") || strings.Contains(ev.Message, addr) {
				t.Fatalf("shadow event %+v", ev)
			}
		}
	}
	if shadowEvents != 1 {
		t.Fatalf("%d shadow events for %d mismatches of one method within 10 s, want 1", shadowEvents, n)
	}
	code, body := h.adminDo("GET", "/metrics", "")
	if code != 200 || !strings.Contains(string(body), fmt.Sprintf(`rpcdash_shadow_compared_total{endpoint="beta",outcome="mismatch"} %d`, n)) {
		t.Fatalf("metrics lack the mismatch count:\n%s", grepLines(string(body), "rpcdash_shadow"))
	}
	// The status JSON carries the contract's fields.
	_, raw := h.adminDo("GET", "/v1/status", "")
	for _, f := range []string{`"role": "shadow"`, `"share": 1`, `"mirrored": 30`, `"compared": 30`, `"match_rate": 0`,
		`"primary_p50_ms"`, `"p95_ms"`, `"last_mismatch": {`, `"method": "eth_getBalance"`} {
		if !strings.Contains(string(raw), f) {
			t.Fatalf("status lacks %s", f)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The same answers match (match_rate 1); reads of the latest block that
// differ because the shadow's head is ahead are tip outcomes, apart from
// mismatches.
func TestShadow_SameAnswersMatchAndLatestReadsNearTheTipAreTip(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	for i := 0; i < 10; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
		mustOK(t, h.call(100+i, "eth_chainId"))
	}
	sh := h.settledShadow("beta", 20)
	if sh.Match != 20 || sh.MatchRate != 1 || sh.Mismatch+sh.Tip+sh.Errors != 0 {
		t.Fatalf("same answers: %+v, want 20 matches, match_rate 1", *sh)
	}
	h.sims[1].SetHeadAhead(7)
	for i := 0; i < 10; i++ {
		mustOK(t, h.call(200+i, "eth_blockNumber"))
	}
	sh = h.settledShadow("beta", 30)
	t.Logf("after head ahead: %+v", *sh)
	if sh.Tip != 10 || sh.Mismatch != 0 || sh.MatchRate != 1 {
		t.Fatalf("eth_blockNumber with a differing head: %+v, want 10 tip outcomes and no mismatch", *sh)
	}
}

// Writes and filter methods are never mirrored: the shadow's sim sees none
// of them, while a read beside them is mirrored.
func TestShadow_WritesAndFiltersAreNeverMirrored(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_sendRawTransaction", "0x01"))
	f := h.call(2, "eth_newFilter", map[string]any{})
	mustOK(t, f)
	mustOK(t, h.call(3, "eth_newBlockFilter"))
	if r := h.call(4, "mev_unknownMethod"); r.endpoint != "alpha" { // in no table: sent once, like a write
		t.Fatalf("unknown method answered by %q: %s", r.endpoint, r.body)
	}
	mustOK(t, h.call(5, "eth_getBalance", addr, "0x10"))
	h.settledShadow("beta", 1)
	c := h.sims[1].Counters()
	if c.Total != 1 || c.ByMethod["eth_getBalance"] != 1 {
		t.Fatalf("beta's sim saw %v, want the one read mirrored only", c.ByMethod)
	}
}

// A shadow that hangs costs clients nothing: every answer arrives while the
// mirrors of the earlier reads are still hanging at the shadow. Past 64 in
// flight, mirrors are dropped and counted; goroutines stay bounded; Close
// ends the hung mirrors (goleak checks nothing is left).
func TestShadow_HungShadowNeverDelaysClientsAndMirrorsAreBounded(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	h.sims[1].SetMode(sim.ModeHang)
	before := runtime.NumGoroutine()
	const n = 100
	for i := 0; i < n; i++ {
		r := h.call(i, "eth_getBalance", addr, "0x10")
		mustOK(t, r)
		if r.endpoint != "alpha" {
			t.Fatalf("read %d answered by %q", i, r.endpoint)
		}
		// Structural: this answer came back while every earlier mirror
		// (up to the bound) still hangs at the shadow.
		if i > 0 && i <= 64 {
			if err := h.sims[1].WaitFor(ctxT(t, 5*time.Second), func(c sim.Counters) bool { return c.Hanging >= int64(i) }); err != nil {
				t.Fatalf("read %d: the shadow holds %d mirrors, want %d", i, h.sims[1].Counters().Hanging, i)
			}
		}
	}
	testutil.WaitUntil(t, 5*time.Second, "64 mirrors hanging, every read's mirror decided", func() bool {
		sh := h.endpoint("beta").Shadow
		return h.sims[1].Counters().Hanging == 64 && sh.Mirrored+sh.Dropped >= n
	})
	st := h.status()
	sh := st.Endpoints[1].Shadow
	t.Logf("after %d reads: mirrors in flight %d, shadow %+v, goroutines %d → %d", n, st.MirrorsInFlight, *sh, before, runtime.NumGoroutine())
	if st.MirrorsInFlight != 64 || sh.Mirrored != 64 || sh.Dropped != n-64 || sh.Compared != 0 {
		t.Fatalf("in flight %d, shadow %+v: want 64 in flight, 64 mirrored, %d dropped", st.MirrorsInFlight, *sh, n-64)
	}
	// Each mirror holds its goroutine, the transport's two of its
	// connection and the sim's: bounded by the mirrors, not by the reads.
	// 100 more reads, all dropped, add none.
	held := runtime.NumGoroutine()
	for i := 0; i < n; i++ {
		mustOK(t, h.call(n+i, "eth_getBalance", addr, "0x10"))
	}
	after := runtime.NumGoroutine()
	t.Logf("goroutines: %d before, %d with 64 mirrors hanging, %d after 100 more reads", before, held, after)
	if after-held > 10 || held-before > 64*6 {
		t.Fatalf("goroutines %d → %d → %d: not bounded by the 64 mirrors", before, held, after)
	}
	// The last read's mirror is decided once its answer is on the wire,
	// which may be after the client has it.
	var sh2 *engine.ShadowSnapshot
	testutil.WaitUntil(t, 5*time.Second, "every read's mirror decided", func() bool {
		sh2 = h.endpoint("beta").Shadow
		return sh2.Mirrored+sh2.Dropped >= 2*n
	})
	if sh2.Mirrored != 64 || sh2.Dropped != 2*n-64 {
		t.Fatalf("after %d reads: %+v", 2*n, *sh2)
	}
	if c := h.sims[0].Counters(); c.Total != 2*n {
		t.Fatalf("alpha answered %d reads, want %d", c.Total, 2*n)
	}
	if err := h.eng.Close(); err != nil {
		t.Fatalf("close with hung mirrors: %v", err)
	}
}

// A shadow answering HTTP 500 causes no client error and does not touch the
// shadow's or the primary's breaker: its failures are error outcomes, and
// their quick failures are not its latency (p50/p95 are of answers only).
func TestShadow_FailingShadowIsErrorOutcomesOnly(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	h.sims[1].SetMode(sim.ModeError)
	for i := 0; i < 20; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
	}
	sh := h.settledShadow("beta", 20)
	if sh.Errors != 20 || sh.MatchRate != 0 {
		t.Fatalf("failing shadow: %+v, want 20 errors", *sh)
	}
	if sh.P50 != 0 || sh.P95 != 0 || sh.PrimaryP50 != 0 {
		t.Fatalf("failures recorded as the shadow's latency: p50 %s p95 %s (answering p50 %s)", sh.P50, sh.P95, sh.PrimaryP50)
	}
	st := h.status()
	if st.Endpoints[0].Breaker.State != engine.BreakerClosed || st.Endpoints[1].Breaker.State != engine.BreakerClosed ||
		st.Endpoints[0].Rates.Failures != 0 || st.Totals.ClientErrors != 0 {
		t.Fatalf("breakers %s/%s, alpha failures %d, client errors %d", st.Endpoints[0].Breaker.State,
			st.Endpoints[1].Breaker.State, st.Endpoints[0].Rates.Failures, st.Totals.ClientErrors)
	}
}

// A shadow takes no part in routing: with the primary drained, a read is
// refused rather than sent to the shadow, and the reason names it.
func TestShadow_NeverAnswersEvenWhenNothingElseCan(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	if err := h.eng.Drain(engine.ActorAdmin, "alpha"); err != nil {
		t.Fatal(err)
	}
	r := h.call(1, "eth_getBalance", addr, "0x10")
	if e := r.rpcError(); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "beta: shadow") {
		t.Fatalf("read with only a shadow left: %s", r.body)
	}
	if got := h.sims[1].Counters().Total; got != 0 {
		t.Fatalf("the shadow got %d requests", got)
	}
	if st := h.status(); st.Routable != 0 || st.Endpoints[1].Routable {
		t.Fatalf("routable %d (beta %v), want 0: a shadow never counts", st.Routable, st.Endpoints[1].Routable)
	}
}

// share mirrors that share of reads: 0.5 over 400 reads, within four
// standard deviations of the binomial (±40).
func TestShadow_ShareMirrorsThatShareOfReads(t *testing.T) {
	h := shadowHarness(t, func(c *engine.Config) { c.Endpoints[1].Share = share(0.5) }, sim.Config{}, sim.Config{})
	const n = 400
	for i := 0; i < n; i++ {
		mustOK(t, h.call(i, "eth_chainId"))
	}
	got := h.endpoint("beta").Shadow.Mirrored
	t.Logf("share 0.5: %d of %d reads mirrored (want 200 ± 40)", got, n)
	if got < 160 || got > 240 {
		t.Fatalf("%d of %d mirrored, want 200 ± 40", got, n)
	}
}

// A shadow that answers HTTP 429 backs off: the reads during its back-off
// are not mirrored, and clients see nothing of it.
func TestShadow_RateLimitedShadowBacksOff(t *testing.T) {
	h := shadowHarness(t, func(c *engine.Config) { c.Breaker.BackoffBase = time.Hour; c.Breaker.BackoffMax = time.Hour },
		sim.Config{}, sim.Config{})
	h.sims[1].SetMode(sim.ModeRateLimit)
	mustOK(t, h.call(1, "eth_chainId"))
	h.settledShadow("beta", 1)
	for i := 0; i < 10; i++ {
		mustOK(t, h.call(10+i, "eth_chainId"))
	}
	sh := h.endpoint("beta").Shadow
	if got := h.sims[1].Counters().Total; got != 1 || sh.Mirrored != 1 || sh.Errors != 1 {
		t.Fatalf("rate-limited shadow got %d requests, figures %+v: want the first mirror only", got, *sh)
	}
}

// /healthz and the routable gauge count against the endpoints that may
// answer: a shadow is not one endpoint missing. With the primary drained
// nothing answers, whatever the shadow's health: 503.
func TestShadow_HealthzAndRoutableGaugeLeaveShadowsOut(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{}, sim.Config{})
	health := func() (int, string) {
		resp, err := h.client.Get(h.rpc + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	if code, body := health(); code != 200 || body != `{"ok":true,"routable":1,"endpoints":1,"panic":false}` {
		t.Fatalf("healthz with alpha and shadow beta: %d %s", code, body)
	}
	_, metrics := h.adminDo("GET", "/metrics", "")
	routable := grepLines(string(metrics), "rpcdash_endpoint_routable{")
	if routable != `rpcdash_endpoint_routable{endpoint="alpha"} 1` {
		t.Fatalf("routable gauge:\n%s\nwant alpha's only", routable)
	}
	if !strings.Contains(string(metrics), `rpcdash_endpoint_info{domain=`) || !strings.Contains(string(metrics), `endpoint="beta"`) {
		t.Fatal("the shadow's other series are gone")
	}
	h.adminDo("POST", "/v1/endpoints/alpha/drain", "")
	if code, body := health(); code != 503 || body != `{"ok":false,"routable":0,"endpoints":1,"panic":false}` {
		t.Fatalf("healthz with alpha drained: %d %s", code, body)
	}
}

// A shadow a block or two behind answers null for the newest blocks the
// client got: near the tip that is a tip outcome, not a mismatch. The same
// null for a block well below the pool head, from a shadow whose last known
// head is past that block, stays a mismatch.
func TestShadow_NullForABlockNotThereYetIsTip(t *testing.T) {
	r := newHeadRig(t, 2, func(c *engine.Config) { c.Endpoints[1].Role = engine.RoleShadow })
	r.sims[1].SetHeadLag(2)
	r.warmUp()
	top := r.sims[0].Head()
	if ep := r.endpoint("s1"); ep.Head != top-2 || ep.Lag != 2 {
		t.Fatalf("shadow s1: head %d lag %d, want %d and 2", ep.Head, ep.Lag, top-2)
	}
	for i, n := range []int64{top, top - 1} {
		rep := r.call(i, "eth_getBlockByNumber", fmt.Sprintf("0x%x", n), false)
		mustOK(t, rep)
		if rep.endpoint != "s0" || strings.Contains(string(rep.body), `"result":null`) {
			t.Fatalf("block %d: %s from %s", n, rep.body, rep.endpoint)
		}
	}
	sh := r.settledShadow("s1", 2)
	if sh.Tip != 2 || sh.Mismatch != 0 || sh.Errors != 0 {
		t.Fatalf("null from a shadow 2 behind for blocks %d and %d: %+v, want 2 tip", top, top-1, *sh)
	}
	// s1 falls 40 behind unseen (no probe): its last known head is still
	// top-2, past block top-20, which is well below the pool head.
	r.sims[1].SetHeadLag(40)
	mustOK(t, r.call(9, "eth_getBlockByNumber", fmt.Sprintf("0x%x", top-20), false))
	sh = r.settledShadow("s1", 3)
	if sh.Tip != 2 || sh.Mismatch != 1 {
		t.Fatalf("null for an old block the shadow claims to have: %+v, want a mismatch", *sh)
	}
	t.Logf("shadow 2 behind: %d tip, then %d mismatch for a block 20 below the pool head", sh.Tip, sh.Mismatch)
}

// A read answered after shutdown has begun is not mirrored: the mirror is
// counted dropped and the shadow never sees it (nothing new starts once the
// engine is stopping).
func TestShadow_NoMirrorOnceShutdownHasBegun(t *testing.T) {
	h := shadowHarness(t, nil, sim.Config{Latency: fixed(300 * time.Millisecond)}, sim.Config{Latency: fixed(0)})
	done := make(chan reply, 1)
	go func() { done <- h.call(1, "eth_getBalance", addr, "0x10") }()
	testutil.WaitUntil(t, 5*time.Second, "the read on alpha", func() bool { return h.sims[0].Counters().InFlight == 1 })
	if err := h.eng.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	r := <-done
	mustOK(t, r)
	var sh *engine.ShadowSnapshot
	for _, ep := range h.eng.Snapshot().Endpoints {
		if ep.Name == "beta" {
			sh = ep.Shadow
		}
	}
	if got := h.sims[1].MethodCount("eth_getBalance"); got != 0 || sh == nil || sh.Mirrored != 0 || sh.Dropped != 1 {
		t.Fatalf("read answered during shutdown: the shadow got %d mirrors; figures %+v, want 0 sent, 1 dropped", got, sh)
	}
}
