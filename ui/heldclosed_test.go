package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// Two endpoints of three failing: breaker.max_open_share opens one breaker
// and keeps the other closed. Seen live, the held one read "● closed" with
// its fault and errors, and nothing on screen said why a failing endpoint
// still took traffic (the one event saying so had scrolled away).
func TestView_EndpointHeldClosedByTheCapSaysSo(t *testing.T) {
	s := incidentSnapshot()
	q := &s.Endpoints[2] // quicknode: a fault, its breaker held closed
	q.Breaker.HeldClosed, q.Breaker.ConsecutiveFailures = true, 7
	for _, c := range []struct {
		w, h int
		want string
	}{
		{120, 36, "HELD"}, // beside FLT 42s: the badges take their narrow forms
		{80, 24, "HELD"},
	} {
		got := fixedModel(s, themes.Default(), c.w, c.h).View()
		row := endpointRow(got, "quicknode")
		if !strings.Contains(row, c.want) || !strings.Contains(row, "closed") {
			t.Errorf("%d×%d: quicknode's row lacks %q: %q", c.w, c.h, c.want, row)
		}
		if other := endpointRow(got, "alchemy"); strings.Contains(other, "HELD") {
			t.Errorf("%d×%d: alchemy is not held: %q", c.w, c.h, other)
		}
	}
	m := fixedModel(s, themes.Default(), 120, 36)
	m.epCursor = 2
	if d := strings.Join(m.detailLines(100), " "); !strings.Contains(d, "held closed by breaker.max_open_share") {
		t.Errorf("quicknode's detail does not say why it is closed:\n%s", d)
	}
	q.Fault = nil // alone, it has room for its words
	if row := endpointRow(fixedModel(s, themes.Default(), 120, 36).View(), "quicknode"); !strings.Contains(row, "HELD CLOSED") {
		t.Errorf("120×36, no fault: %q", row)
	}
}

// lineWith is the first line of view that holds s.
func lineWith(view, s string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
