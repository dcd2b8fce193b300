package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Why a breaker is open is said once, by its event: at 80 columns the
// events panel cuts it ("closed→open 6 attempts in a row outrun by hedges
// and no answer for 993ms: endpoint…" lost "looks hung; cooldown 10s"),
// and in a flood of failovers it scrolls away within seconds. The
// endpoint's detail says it whole.
func TestView_DetailSaysWhyTheBreakerIsOpenOrHeld(t *testing.T) {
	s := incidentSnapshot() // alchemy open (fixtureEvents: "3 consecutive failures; cooldown 20s")
	m := fixedModel(s, themes.Default(), 80, 24)
	d := strings.Join(strings.Fields(strings.Join(m.detailLines(76), " ")), " ")
	if !strings.Contains(d, "closed→open 11:59:55: 3 consecutive failures; cooldown 20s") {
		t.Errorf("alchemy's detail does not say why it opened:\n%s", d)
	}

	s.Endpoints[2].Breaker.HeldClosed = true
	m = fixedModel(s, themes.Default(), 80, 24)
	m.addEvents([]engine.Event{{Seq: 9, Time: t0.Add(-2 * time.Second), Type: engine.EventPool, Endpoint: "quicknode", From: "closed", To: "open refused",
		Actor: engine.ActorEngine, Message: "breaker not opened (3 failures in a row, last: HTTP 500): 1 of 3 endpoints already held out by breakers"}})
	m.epCursor = 2
	d = strings.Join(strings.Fields(strings.Join(m.detailLines(76), " ")), " ")
	if !strings.Contains(d, "breaker not opened (3 failures in a row, last: HTTP 500)") {
		t.Errorf("quicknode's detail does not say why it is held closed:\n%s", d)
	}
	m.epCursor = 1 // infura: closed, never opened: no reason to give
	if d = strings.Join(strings.Fields(strings.Join(m.detailLines(76), " ")), " "); strings.Contains(d, "why:") {
		t.Errorf("infura's closed breaker given a reason:\n%s", d)
	}
}

// The reason wraps under itself: a continuation at the pane's left edge
// read as a line of its own ("20s" under the detail's title).
func TestDetail_BreakerWhyWrapsUnderItself(t *testing.T) {
	m := fixedModel(incidentSnapshot(), themes.Default(), 80, 24)
	lines := m.detailLines(40)
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  why: ") })
	if i < 0 || i+1 >= len(lines) {
		t.Fatalf("no wrapped why line:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines[i+1:] {
		if strings.HasPrefix(l, "fault") || strings.HasPrefix(l, "last errors") || strings.HasPrefix(l, "no errors") || strings.HasPrefix(l, "excluded") || strings.HasPrefix(l, "role") {
			break
		}
		if !strings.HasPrefix(l, "       ") {
			t.Fatalf("why's continuation %q is not under it:\n%s", l, strings.Join(lines, "\n"))
		}
	}
}
