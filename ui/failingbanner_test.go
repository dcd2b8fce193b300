package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// everyEndpointFailing: an error fault on each endpoint, as seen live
// (120×36, demo load 20/s): alchemy's breaker opened, and
// breaker.max_open_share held the other two closed, so the header read
// "2/3 routable", panic routing never began, and no banner said anything
// while 12 % of client requests failed ("err 139 12%").
func everyEndpointFailing() engine.Snapshot {
	s := healthySnapshot()
	s.Endpoints[0].Routable = false
	s.Endpoints[0].Breaker = engine.BreakerSnapshot{State: engine.BreakerOpen, ConsecutiveFailures: 3, Cooldown: 10 * time.Second}
	for i := range s.Endpoints {
		ep := &s.Endpoints[i]
		if i > 0 {
			ep.Breaker.HeldClosed, ep.Breaker.ConsecutiveFailures = true, 20
		}
		ep.Fault = &engine.FaultInfo{Mode: engine.FaultError, Rate: 1, Duration: time.Minute, Since: t0.Add(-5 * time.Second), Expires: t0.Add(55 * time.Second)}
	}
	s.Routable = 2
	s.Client.Errors = 139
	return s
}

func TestView_EveryEndpointFailingSaysSoAndWhatToDo(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(everyEndpointFailing(), themes.Default(), sz[0], sz[1])
		got := bannerText(m)
		for _, want := range []string{"EVERY ENDPOINT FAILING", "infura, quicknode", "held closed"} {
			if !strings.Contains(got, want) {
				t.Errorf("%d×%d: banner lacks %q: %q", sz[0], sz[1], want, got)
			}
		}
		if !strings.Contains(got, "c clears") {
			t.Errorf("%d×%d: banner does not say how to clear the injected faults: %q", sz[0], sz[1], got)
		}
		checkFits(t, m.View(), sz[0], sz[1])
	}
}

// An endpoint whose breaker is open is out of the ranking, not out of
// reach: every read failed by the others fails over to it last, and the
// banner said "Out: … breaker open" while it took an attempt of each
// (console audit, stop 56: its failovers went 153 → 1125 in 49 s). One
// drained, on the wrong chain or refusing connections is never asked and
// stays plainly out (EndpointSnapshot.LastResort).
func TestView_EveryEndpointFailingSaysAnOpenBreakerIsStillAskedLast(t *testing.T) {
	m := fixedModel(everyEndpointFailing(), themes.Default(), 160, 48)
	if got := bannerText(m); !strings.Contains(got, "breaker open, reads still fail over to it last") {
		t.Errorf("banner %q", got)
	}
	for name, out := range map[string]func(*engine.EndpointSnapshot){
		"drained":  func(ep *engine.EndpointSnapshot) { ep.Drained = true },
		"refusing": func(ep *engine.EndpointSnapshot) { ep.Refusing = true },
		"wrong chain": func(ep *engine.EndpointSnapshot) {
			ep.Exclusions = []string{engine.ExcludeWrongChain + ": chain id 5, want 1"}
		},
	} {
		s := everyEndpointFailing()
		out(&s.Endpoints[0])
		m = fixedModel(s, themes.Default(), 160, 48)
		if got := bannerText(m); strings.Contains(got, "fail over to it") {
			t.Errorf("%s, never asked: banner %q", name, got)
		}
	}
	// Half-open, it is asked last too.
	s := everyEndpointFailing()
	s.Endpoints[0].Breaker.State = engine.BreakerHalfOpen
	m = fixedModel(s, themes.Default(), 160, 48)
	if got := bannerText(m); !strings.Contains(got, "breaker half-open, reads still fail over to it last") {
		t.Errorf("half-open: banner %q", got)
	}
}

// Held-closed breakers come and go with a success: the banner stays,
// as over, rather than move the screen with each.
func TestView_EveryEndpointFailingBannerHoldsItsLines(t *testing.T) {
	m := fixedModel(everyEndpointFailing(), themes.Default(), 120, 36)
	n := len(m.bannerLines())
	calm := healthySnapshot()
	calm.Time = t0.Add(time.Second)
	m.onSnapshot(snapshotMsg{snap: calm})
	if got := len(m.bannerLines()); got != n || !strings.Contains(bannerText(m), "over") {
		t.Fatalf("a second after: %d banner lines (were %d): %q", got, n, bannerText(m))
	}
	calm.Time = t0.Add(time.Second + slowdownHold)
	m.onSnapshot(snapshotMsg{snap: calm})
	if got := bannerText(m); got != "" {
		t.Fatalf("after the hold: %q", got)
	}
}

// One endpoint well is not every endpoint failing.
func TestView_OneEndpointWellIsNoFailingBanner(t *testing.T) {
	s := everyEndpointFailing()
	s.Endpoints[2].Breaker.HeldClosed = false
	m := fixedModel(s, themes.Default(), 120, 36)
	if got := bannerText(m); strings.Contains(got, "EVERY ENDPOINT FAILING") {
		t.Fatalf("banner %q", got)
	}
}
