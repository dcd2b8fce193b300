package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// bannerText is the banner as one line of words: the view's lines that
// start with " ⚠" and those that follow them up to the table, joined.
func bannerText(m Model) string {
	var words []string
	for _, l := range m.bannerLines() {
		words = append(words, strings.TrimSpace(l))
	}
	return strings.Join(words, " ")
}

// Every endpoint refusing connections: panic routing has nothing left to
// send a read to, and every request fails. Seen live, the banner said
// "PANIC ROUTING … reads go to every endpoint not drained, least bad
// first" while the header counted client errors climbing, and at 80
// columns it named one endpoint's reason of three ("steady: breaker
// open;"), the rest cut off.
func TestView_EveryEndpointRefusingSaysNoRoutableEndpointWithEachReason(t *testing.T) {
	s := healthySnapshot()
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		ep.Routable, ep.Refusing = false, true
		ep.Breaker.State = engine.BreakerOpen
	}
	s.Routable, s.LastResort, s.Panic, s.PanicReason = 0, 0, true, "0 of 3 endpoints routable, below router.panic_threshold 0.50"
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(s, themes.Default(), sz[0], sz[1])
		got := bannerText(m)
		if !strings.Contains(got, "NO ROUTABLE ENDPOINT: requests fail now") || strings.Contains(got, "PANIC ROUTING") {
			t.Errorf("%d×%d: want NO ROUTABLE ENDPOINT, not panic routing: %q", sz[0], sz[1], got)
		}
		for _, ep := range s.Endpoints {
			if want := ep.Name + ": refusing connections (breaker open)"; !strings.Contains(got, want) {
				t.Errorf("%d×%d: banner lacks %q: %q", sz[0], sz[1], want, got)
			}
		}
		checkFits(t, m.View(), sz[0], sz[1])
	}
}

// Panic routing with one endpoint of three routable: the banner says why
// the other two are out, whole, and that requests, not reads only, go to
// the least bad (it said "reads go to…" while a write,
// eth_sendRawTransaction, was answered by the lagging endpoint it left), at 80 columns too (the reasons were only
// given when none was routable, and then cut at the banner's second line).
func TestView_PanicBannerSaysWhyTheOthersAreOut(t *testing.T) {
	s := incidentSnapshot() // alchemy open, infura drained
	s.Endpoints[2].Routable = false
	s.Endpoints[2].BackoffUntil = t0.Add(20e9)
	s.Endpoints[0].Routable, s.Endpoints[0].Breaker.State = true, engine.BreakerHalfOpen
	s.Routable, s.Panic, s.PanicReason = 1, true, "1 of 2 endpoints routable (1 drained not counted), below router.panic_threshold 0.60"
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(s, themes.Default(), sz[0], sz[1])
		got := bannerText(m)
		// At 80 columns what panic routing does is said in fewer words
		// (TestView_PanicBannerAndHeaderCountTheSameEndpoints).
		does := "requests go to every endpoint not drained or refusing"
		if sz[0] == 80 {
			does = "requests go to the least bad endpoints"
		}
		for _, want := range []string{"PANIC ROUTING: 1 of 2 endpoints routable (1 drained not counted)", does,
			"out: infura: drained; quicknode: backing off after 429"} {
			if !strings.Contains(got, want) {
				t.Errorf("%d×%d: banner lacks %q: %q", sz[0], sz[1], want, got)
			}
		}
		if strings.Contains(got, "alchemy:") {
			t.Errorf("%d×%d: alchemy is routable, the banner gives it a reason: %q", sz[0], sz[1], got)
		}
		checkFits(t, m.View(), sz[0], sz[1])
	}
}

// Whether panic routing has an endpoint left is the engine's fact
// (Snapshot.LastResort, its own lastResort rule), not one the console
// derives again from the endpoints' flags: here the endpoints look like
// candidates (open breakers, none marked refusing) but the engine counts
// none it may send a read to.
func TestView_NoRoutableEndpointFollowsTheEnginesLastResortCount(t *testing.T) {
	s := healthySnapshot()
	for i := range s.Endpoints {
		s.Endpoints[i].Routable = false
		s.Endpoints[i].Breaker.State = engine.BreakerOpen
	}
	s.Routable, s.Panic, s.PanicReason = 0, true, "0 of 3 endpoints routable, below router.panic_threshold 0.50"
	s.LastResort = 0
	if got := bannerText(fixedModel(s, themes.Default(), 120, 36)); !strings.Contains(got, "NO ROUTABLE ENDPOINT: requests fail now") {
		t.Errorf("last_resort 0: want NO ROUTABLE ENDPOINT: %q", got)
	}
	s.LastResort = 3
	if got := bannerText(fixedModel(s, themes.Default(), 120, 36)); !strings.Contains(got, "PANIC ROUTING") || strings.Contains(got, "NO ROUTABLE") {
		t.Errorf("last_resort 3: want PANIC ROUTING: %q", got)
	}
}

// A panic of a second put its three banner lines on and off within a
// second or two, moving the whole screen down and back. Its banner is
// held slowdownHold after the end, as many lines, saying it is over, when
// it ran and what it was; then it goes.
func TestView_PanicBannerIsHeldAfterItEnds(t *testing.T) {
	calm := healthySnapshot()
	panicky := healthySnapshot()
	panicky.Endpoints[0].Routable, panicky.Endpoints[1].Routable = false, false
	panicky.Endpoints[0].Breaker.State, panicky.Endpoints[1].Breaker.State = engine.BreakerOpen, engine.BreakerOpen
	panicky.Routable, panicky.Panic, panicky.PanicReason = 1, true, "1 of 3 endpoints routable, below router.panic_threshold 0.50"
	at := func(s engine.Snapshot, d time.Duration) snapshotMsg {
		s.Time = t0.Add(d)
		return snapshotMsg{snap: s}
	}
	for _, w := range []int{80, 120, 160} {
		m := fixedModel(calm, themes.Default(), w, 36)
		normal := len(m.bannerLines())
		m.onSnapshot(at(panicky, time.Second))
		live := m.bannerLines()
		if text := strings.Join(live, " "); !strings.Contains(text, "PANIC ROUTING: 1 of 3") || !strings.Contains(text, "alchemy: breaker open") {
			t.Fatalf("%d: live panic banner %q", w, text)
		}
		// Recovering: the engine's reason says so for its last second.
		recovering := panicky
		recovering.Endpoints = slices.Clone(panicky.Endpoints)
		recovering.Endpoints[1].Routable, recovering.Endpoints[1].Breaker.State, recovering.Routable = true, engine.BreakerClosed, 2
		recovering.PanicReason = "2 of 3 endpoints routable again, at or above router.panic_threshold 0.50; panic routing ends after 1s of it"
		m.onSnapshot(at(recovering, 1500*time.Millisecond))
		live = m.bannerLines() // what its end must not move
		m.onSnapshot(at(calm, 2*time.Second))
		for _, d := range []time.Duration{2 * time.Second, 5 * time.Second, 2*time.Second + slowdownHold - time.Millisecond} {
			m.onSnapshot(at(calm, d))
			held := m.bannerLines()
			text := bannerText(m)
			if len(held) != len(live) || !strings.Contains(text, "PANIC ROUTING over "+fmtAge(d-2*time.Second)+" ago (12:00:01–12:00:02), at its worst: 1 of 3") ||
				!strings.Contains(text, "out: alchemy: breaker open; infura: breaker open") {
				t.Fatalf("%d, %s after the end: %d lines (live %d): %q", w, d-2*time.Second, len(held), len(live), text)
			}
			checkFits(t, m.View(), w, 36)
		}
		m.onSnapshot(at(calm, 2*time.Second+slowdownHold))
		if n := len(m.bannerLines()); n != normal || strings.Contains(bannerText(m), "PANIC") {
			t.Fatalf("%d: %s after the end the banner is still there: %q", w, slowdownHold, bannerText(m))
		}
		// A panic that comes back while held is live again, from its own start.
		m.onSnapshot(at(panicky, 20*time.Second))
		m.onSnapshot(at(calm, 21*time.Second))
		m.onSnapshot(at(panicky, 22*time.Second))
		m.onSnapshot(at(calm, 23*time.Second))
		m.onSnapshot(at(calm, 24*time.Second))
		if text := bannerText(m); !strings.Contains(text, "(12:00:22–12:00:23)") {
			t.Fatalf("%d: a second panic: %q", w, text)
		}
	}
}

// A panic of a second between two refreshes is seen only as it recovers:
// its held banner said "at its worst: 2 of 3 endpoints routable again, at
// or above …". It takes the engine's worst reason, panic_worst.
func TestView_PanicSeenOnlyAsItRecoveredHoldsItsWorst(t *testing.T) {
	recovering := healthySnapshot()
	recovering.Endpoints[0].Routable, recovering.Endpoints[0].Breaker.State = false, engine.BreakerOpen
	recovering.Routable, recovering.Panic = 2, true
	recovering.PanicReason = "2 of 3 endpoints routable again, at or above router.panic_threshold 0.50; panic routing ends after 1s of it"
	recovering.PanicWorst = "1 of 3 endpoints routable, below router.panic_threshold 0.50"
	recovering.Time = t0.Add(time.Second)
	calm := healthySnapshot()
	calm.PanicWorst = recovering.PanicWorst // the engine keeps the last one's
	for _, w := range []int{80, 120} {
		m := fixedModel(healthySnapshot(), themes.Default(), w, 36)
		m.onSnapshot(snapshotMsg{snap: recovering})
		calm.Time = t0.Add(2 * time.Second)
		m.onSnapshot(snapshotMsg{snap: calm})
		text := bannerText(m)
		if !strings.Contains(text, "at its worst: 1 of 3 endpoints routable, below") || strings.Contains(text, "again") {
			t.Fatalf("%d: held banner of a panic seen only as it recovered: %q", w, text)
		}
		checkFits(t, m.View(), w, 36)
	}
}

// One endpoint drained and another out: the header says 1/3 routable (of
// every endpoint but the shadows) and panic routing's reason, which counts
// its pool without the drained, says so ("1 of 2 … (1 drained not
// counted)"), so that the two add up on one screen. The reason is the
// banner's first words and stays whole at 80 columns, live and while
// panic only holds on; what panic routing does takes the room left.
func TestView_PanicBannerAndHeaderCountTheSameEndpoints(t *testing.T) {
	s := incidentSnapshot() // alchemy open, infura drained, quicknode routable
	s.Panic = true
	reasons := []string{
		"1 of 2 endpoints routable (1 drained not counted), below router.panic_threshold 0.60",
		"1 of 2 endpoints routable again (1 drained not counted), at or above router.panic_threshold 0.50; panic routing ends after 1s of it",
	}
	for _, reason := range reasons {
		s.PanicReason = reason
		for _, sz := range [][2]int{{80, 24}, {100, 30}, {120, 36}, {160, 48}} {
			m := fixedModel(s, themes.Default(), sz[0], sz[1])
			header := strings.Join(m.headerLines(), " ")
			if !strings.Contains(header, "1/3 routable") {
				t.Errorf("%d×%d: header %q, want 1/3 routable", sz[0], sz[1], header)
			}
			got := bannerText(m)
			if !strings.Contains(got, "PANIC ROUTING: "+reason) || strings.Contains(got, "…") {
				t.Errorf("%d×%d: banner %q, want the reason whole: %q", sz[0], sz[1], got, reason)
			}
			if !strings.Contains(got, "out: alchemy: breaker open; infura: drained") {
				t.Errorf("%d×%d: banner %q lacks the endpoints out", sz[0], sz[1], got)
			}
			checkFits(t, m.View(), sz[0], sz[1])
		}
	}
}

// Every endpoint drained from the keyboard: the banner said "requests
// fail now" and nothing of the key that undoes it (seen live, 120×36,
// three drains; the screen's only hint was the help bar's "d
// drain/undrain endpoint", cut at 80 columns).
func TestView_NoRoutableEndpointSaysWhatUndoesIt(t *testing.T) {
	s := healthySnapshot()
	for i := range s.Endpoints {
		s.Endpoints[i].Routable, s.Endpoints[i].Drained = false, true
	}
	s.Routable, s.LastResort = 0, 0
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(s, themes.Default(), sz[0], sz[1])
		if got := bannerText(m); !strings.Contains(got, "NO ROUTABLE ENDPOINT") || !strings.Contains(got, "d undrains") {
			t.Errorf("%d×%d: banner %q", sz[0], sz[1], got)
		}
		checkFits(t, m.View(), sz[0], sz[1])
	}
	s.Endpoints[0].Drained = false
	s.Endpoints[0].Fault = &engine.FaultInfo{Mode: engine.FaultRefused}
	if got := bannerText(fixedModel(s, themes.Default(), 120, 36)); !strings.Contains(got, "c clears a fault") {
		t.Errorf("a refused fault: banner %q", got)
	}
}

// A read-only console names no key it has turned off.
func TestView_ReadOnlyBannersNameNoKeyThatActs(t *testing.T) {
	s := healthySnapshot()
	for i := range s.Endpoints {
		s.Endpoints[i].Routable, s.Endpoints[i].Drained = false, true
	}
	s.Routable, s.LastResort = 0, 0
	for name, snap := range map[string]engine.Snapshot{"every endpoint drained": s, "every endpoint failing": everyEndpointFailing()} {
		m := fixedModel(snap, themes.Default(), 120, 36)
		m.opts.ReadOnly = true
		m.onSnapshot(snapshotMsg{snap: snap})
		if got := bannerText(m); got == "" || strings.Contains(got, "d undrains") || strings.Contains(got, "c clears") {
			t.Errorf("%s, --readonly: banner %q", name, got)
		}
	}
}
