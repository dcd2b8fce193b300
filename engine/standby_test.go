package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// standbyEvent returns the first pool event whose message holds text.
func (h *harness) standbyEvent(text string) (engine.Event, bool) {
	for _, ev := range h.events() {
		if ev.Type == engine.EventPool && strings.Contains(ev.Message, text) {
			return ev, true
		}
	}
	return engine.Event{}, false
}

// A standby gets no client read while its primary is routable, not even
// the reads router.explore_after hands every healthy endpoint now and then;
// the same endpoint as a primary gets those (the control), so the count
// can tell.
func TestStandby_GetsNoReadsWhileThePrimaryIsRoutableExplorationIncluded(t *testing.T) {
	t.Parallel()
	for _, role := range []string{engine.RoleStandby, engine.RolePrimary} {
		t.Run(role, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				c.Endpoints[1].Role = role
				c.Router.ExploreAfter = time.Millisecond
			}, sim.Config{Name: "alpha", Latency: fixed(time.Millisecond)}, sim.Config{Name: "beta", Latency: fixed(15 * time.Millisecond)})
			for i := 0; i < 100; i++ {
				mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
			}
			got := h.sims[1].MethodCount("eth_getBalance")
			t.Logf("beta as %s: %d of 100 reads (alpha %d)", role, got, h.sims[0].MethodCount("eth_getBalance"))
			st := h.status()
			if st.Endpoints[1].Role != role || st.Endpoints[0].Role != engine.RolePrimary {
				t.Fatalf("roles %q %q, want primary %s", st.Endpoints[0].Role, st.Endpoints[1].Role, role)
			}
			if role == engine.RoleStandby {
				if got != 0 || st.StandbyActive {
					t.Fatalf("standby got %d reads, standby_active %v (%s): want 0, false", got, st.StandbyActive, st.StandbyReason)
				}
				return
			}
			if got == 0 {
				t.Fatal("the primary control got no exploration read: the standby count proves nothing")
			}
		})
	}
}

// The primary fails: the standby answers every read (no client error) and
// takes the one write sent while the primary's breaker is open; events say
// when it starts and stops taking traffic. Once the primary is readmitted
// the standby gets no new read.
func TestStandby_TakesOverWhenThePrimaryFailsAndStepsBackWhenItRecovers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[1].Role = engine.RoleStandby
	}, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
	alpha, beta := h.sims[0], h.sims[1]
	alpha.SetMode(sim.ModeError)

	for i := 0; i < 100; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	if h.endpoint("alpha").Breaker.State == engine.BreakerClosed {
		t.Fatalf("alpha's breaker is still closed: %v", h.transitions("alpha"))
	}
	served := beta.MethodCount("eth_getBalance")
	if served < 100 {
		t.Fatalf("beta answered %d of 100 reads", served)
	}
	ev, ok := h.standbyEvent("standby beta takes traffic")
	if !ok || ev.Actor != engine.ActorEngine || !strings.Contains(ev.Message, "primaries routable 0 of 1") {
		t.Fatalf("no standby event from the engine: %+v %v", ev, h.events())
	}
	st := h.status()
	if !st.StandbyActive || !strings.Contains(st.StandbyReason, "primaries routable 0 of 1") {
		t.Fatalf("standby_active %v, reason %q", st.StandbyActive, st.StandbyReason)
	}
	t.Logf("100 reads, 0 client errors, beta answered %d; event %q; standby_reason %q", served, ev.Message, st.StandbyReason)

	// A write while alpha is open goes to beta, once.
	w := h.call(1000, "eth_sendRawTransaction", "0x01")
	mustOK(t, w)
	if w.endpoint != "beta" || w.attempts != 1 || beta.MethodCount("eth_sendRawTransaction") != 1 || alpha.MethodCount("eth_sendRawTransaction") != 0 {
		t.Fatalf("write answered by %q after %d attempts; beta got %d, alpha %d, want beta once",
			w.endpoint, w.attempts, beta.MethodCount("eth_sendRawTransaction"), alpha.MethodCount("eth_sendRawTransaction"))
	}

	alpha.SetMode(sim.ModeNormal)
	next := h.endpoint("alpha").Breaker.NextTrialAt
	testutil.WaitUntil(t, 5*time.Second, "alpha's cooldown", func() bool { return time.Now().After(next.Add(time.Millisecond)) })
	readUntilClosed(t, h, "alpha")

	before := beta.MethodCount("eth_getBalance")
	for i := 0; i < 100; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.endpoint != "alpha" {
			t.Fatalf("read %d answered by %q after alpha was readmitted", i, r.endpoint)
		}
	}
	if got := beta.MethodCount("eth_getBalance") - before; got != 0 {
		t.Fatalf("beta got %d new reads after alpha was readmitted", got)
	}
	testutil.WaitUntil(t, 5*time.Second, "the standby's stop event", func() bool {
		_, ok := h.standbyEvent("standby beta takes no new traffic")
		return ok
	})
	if st := h.status(); st.StandbyActive {
		t.Fatalf("standby_active still true after the stop event: %s", st.StandbyReason)
	}
	stop, _ := h.standbyEvent("takes no new traffic")
	t.Logf("alpha readmitted: 100 reads, beta got 0 new; event %q", stop.Message)
}

// Hedges go to another primary, never to a standby, while a primary is
// routable: with a hedge at once and two hedges per request the standby
// still gets nothing.
func TestStandby_HedgesNeverGoToAStandbyWhileAPrimaryIsRoutable(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[2].Role = engine.RoleStandby
		c.Hedge.Enabled = true
		c.Hedge.Delay = "0s"
		c.Hedge.MaxExtra = 2
		c.Hedge.Budget = 1
		c.Hedge.BudgetBurst = 1000
		c.Router.ExploreAfter = time.Millisecond
	}, sim.Config{Name: "alpha", Latency: fixed(2 * time.Millisecond)}, sim.Config{Name: "beta", Latency: fixed(2 * time.Millisecond)},
		sim.Config{Name: "gamma", Latency: fixed(time.Millisecond)})
	hedged := 0
	for i := 0; i < 100; i++ {
		r := h.call(i, "eth_getBalance", addr, "latest")
		mustOK(t, r)
		if r.hedged {
			hedged++
		}
	}
	if hedged == 0 {
		t.Fatal("no request was hedged: the standby's count proves nothing")
	}
	if got := h.sims[2].MethodCount("eth_getBalance"); got != 0 {
		t.Fatalf("standby gamma got %d attempts (%d requests hedged)", got, hedged)
	}
	t.Logf("100 reads, %d hedged; alpha %d attempts, beta %d, standby gamma 0", hedged,
		h.sims[0].MethodCount("eth_getBalance"), h.sims[1].MethodCount("eth_getBalance"))
}

// Standbys join when the ready primaries fall below router.panic_threshold
// of the primaries, before panic routing: 3 primaries with 1 failing keep
// the standby idle; with 2 failing (1 of 3 < 0.5) it takes traffic, and as
// it is counted in the pool (2 of 4 routable) panic routing stays off.
func TestStandby_JoinsBelowThePanicThresholdOfPrimaries(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[3].Role = engine.RoleStandby
		c.Breaker.Cooldown, c.Breaker.MaxCooldown = time.Hour, time.Hour
	}, sim.Config{Name: "p0", Latency: fixed(5 * time.Millisecond)}, sim.Config{Name: "p1", Latency: fixed(5 * time.Millisecond)},
		sim.Config{Name: "p2", Latency: fixed(5 * time.Millisecond)}, sim.Config{Name: "sb", Latency: fixed(5 * time.Millisecond)})
	sb := h.sims[3]
	// Four clients at once: the reads in flight spread them over the
	// endpoints of equal cost. One client at a time, which of equals takes
	// each read turned on scheduling: on a loaded machine the failing p1
	// got none of 60 (its breaker never opened), or the joined standby
	// none of 60 beside p2.
	read := func(n int) { h.loadBy(n, 4) }
	h.sims[0].SetMode(sim.ModeError)
	read(60)
	if h.endpoint("p0").Breaker.State != engine.BreakerOpen {
		t.Fatalf("p0 not open: %v", h.transitions("p0"))
	}
	if got := sb.MethodCount("eth_getBalance"); got != 0 {
		t.Fatalf("2 of 3 primaries ready: the standby got %d reads", got)
	}
	h.sims[1].SetMode(sim.ModeError)
	read(60)
	if h.endpoint("p1").Breaker.State != engine.BreakerOpen {
		t.Fatalf("p1 not open: %v", h.transitions("p1"))
	}
	before := sb.MethodCount("eth_getBalance")
	read(60)
	got := sb.MethodCount("eth_getBalance") - before
	st := h.status()
	if got == 0 || !st.StandbyActive || st.Panic {
		t.Fatalf("1 of 3 primaries ready: standby got %d of 60 reads, standby_active %v, panic %v (%s)", got, st.StandbyActive, st.Panic, st.PanicReason)
	}
	want := fmt.Sprintf("primaries routable 1 of 3, below router.panic_threshold %.2f: standby sb takes traffic", 0.5)
	if _, ok := h.standbyEvent(want); !ok {
		t.Fatalf("no event %q: %v", want, h.events())
	}
	t.Logf("1 of 3 primaries ready: standby took %d of 60 reads, p2 %d; panic %v; event %q", got, h.sims[2].MethodCount("eth_getBalance"), st.Panic, want)
}

// A primary whose breaker breaker.max_open_share keeps closed is failing as
// if open: it does not count as ready, so the standby joins (and takes the
// reads its error rate steers away from it) rather than every read paying
// a failed attempt on it first.
func TestStandby_JoinsForAPrimaryTheOpenCapKeepsClosed(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[2].Role = engine.RoleStandby
		c.Breaker.Cooldown = time.Minute // the open one stays open for the test
	}, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"}, sim.Config{Name: "backup"})
	alpha, beta, backup := h.sims[0], h.sims[1], h.sims[2]
	alpha.SetMode(sim.ModeError)
	beta.SetMode(sim.ModeError)
	for i := 0; i < 60; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	refused := false
	for _, ev := range h.events() {
		refused = refused || ev.To == "open refused"
	}
	if !refused {
		t.Fatalf("the cap refused no open (transitions alpha %v, beta %v): the test exercises nothing", h.transitions("alpha"), h.transitions("beta"))
	}
	st := h.status()
	if !st.StandbyActive {
		t.Fatalf("standby not active with one primary open and the other failing, kept closed by the cap: %q", st.StandbyReason)
	}
	before := alpha.MethodCount("eth_getBalance") + beta.MethodCount("eth_getBalance")
	for i := 0; i < 100; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "latest"))
	}
	failed := alpha.MethodCount("eth_getBalance") + beta.MethodCount("eth_getBalance") - before
	if failed > 20 {
		t.Fatalf("100 reads paid %d failed attempts on the failing primaries: the standby should take them", failed)
	}
	t.Logf("standby_reason %q; of 100 reads, %d tried a failing primary first; backup served %d", st.StandbyReason, failed, backup.MethodCount("eth_getBalance"))
}

// Promoting the last standby ends the standby state: with alpha drained the
// standby beta takes traffic; once beta is a primary no standby remains, so
// standby_active goes false with its "standby → primaries" event, even
// after alpha comes back (nothing would ever call for a standby again).
func TestStandby_StateEndsWhenTheLastStandbyIsPromoted(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) {
		c.Endpoints[1].Role = engine.RoleStandby
	}, sim.Config{Name: "alpha"}, sim.Config{Name: "beta"})
	if code, b := h.adminDo("POST", "/v1/endpoints/alpha/drain", ""); code != 200 {
		t.Fatalf("drain: HTTP %d %s", code, b)
	}
	r := h.call(1, "eth_getBalance", addr, "latest")
	mustOK(t, r)
	if r.endpoint != "beta" {
		t.Fatalf("alpha drained: answered by %q", r.endpoint)
	}
	testutil.WaitUntil(t, 5*time.Second, "standby_active", func() bool { return h.status().StandbyActive })
	if code, out := h.putRole("beta", `{"role": "primary"}`); code != 200 {
		t.Fatalf("promote beta: HTTP %d %v", code, out)
	}
	if code, b := h.adminDo("POST", "/v1/endpoints/alpha/undrain", ""); code != 200 {
		t.Fatalf("undrain: HTTP %d %s", code, b)
	}
	testutil.WaitUntil(t, 5*time.Second, "standby_active false", func() bool { return !h.status().StandbyActive })
	ev, ok := h.standbyEvent("no standby or canary left")
	if !ok || ev.From != "standby" || ev.To != "primaries" {
		t.Fatalf("no standby → primaries event: %+v %v", ev, h.events())
	}
	if st := h.status(); st.StandbyReason != "" {
		t.Fatalf("standby_reason %q after the state ended", st.StandbyReason)
	}
	t.Logf("event %q", ev.Message)
}
