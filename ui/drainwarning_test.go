package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Two endpoints, one out of routing (lagging under a stale fault): d on
// the other asked "WARNING: no endpoint would be left to route to: every
// request fails", and once drained every request, reads and a write, was
// answered by the lagging one through panic routing, err 0. Only an
// endpoint drained, a shadow, on the wrong chain or refusing connections
// is out of panic routing's reach; the question says which way it goes.
func TestDrain_TheLastRoutableSaysWhatPanicRoutingWouldDo(t *testing.T) {
	s := healthySnapshot()
	for i := 1; i < 3; i++ {
		ep := &s.Endpoints[i]
		ep.Routable, ep.Breaker.State = false, engine.BreakerOpen
	}
	s.Routable = 1
	q := pressKeys(fixedModel(s, themes.Default(), 120, 36), "d").confirm.question
	if strings.Contains(q, "every request fails") || !strings.Contains(q, "panic routing would send every request to the 2 endpoints left, least bad first (infura: breaker open; quicknode: breaker open)") {
		t.Errorf("breakers open, not refusing: %q", q)
	}

	for i := 1; i < 3; i++ {
		s.Endpoints[i].Refusing = true
	}
	s.Endpoints[2].Refusing, s.Endpoints[2].Drained = false, true
	q = pressKeys(fixedModel(s, themes.Default(), 120, 36), "d").confirm.question
	if !strings.Contains(q, "every request fails") || strings.Contains(q, "panic routing") {
		t.Errorf("one refusing, one drained: %q", q)
	}
}

// The drain question is asked from the figures of one Snapshot; left open
// while the others went out of routing, it still said "2 other endpoints
// stay routable" and no warning. It is asked again as each Snapshot comes.
func TestDrain_TheQuestionFollowsThePool(t *testing.T) {
	s := healthySnapshot()
	m := pressKeys(fixedModel(s, themes.Default(), 120, 36), "d")
	if q := m.confirm.question; !strings.Contains(q, "2 other endpoints stay routable") {
		t.Fatalf("question %q", q)
	}
	for i := 1; i < 3; i++ {
		ep := &s.Endpoints[i]
		ep.Routable, ep.Refusing, ep.Breaker.State = false, true, engine.BreakerOpen
	}
	s.Routable = 1
	m.onSnapshot(snapshotMsg{snap: s})
	if q := m.confirm.question; m.overlay != overlayConfirm || !strings.Contains(q, "No other endpoint stays routable") || !strings.Contains(q, "every request fails") {
		t.Errorf("after the others went: %q", q)
	}
	m = pressKeys(m, "n")
	if m.overlay != overlayNone {
		t.Errorf("n left overlay %v", m.overlay)
	}
}
