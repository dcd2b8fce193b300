package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// An endpoint a method hung on, answering the others, says so in its
// badges (hng when narrow) and, with the hold's end, in the detail; its
// detail still does when it is out for every method.
func TestView_AHungMethodIsNamedInBadgesAndDetail(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[0].Methods["eth_getLogs"] = engine.MethodSnapshot{HungUntil: t0.Add(30 * time.Second)}
	for _, c := range []struct {
		w, h int
		want string
	}{
		{160, 48, "hung eth_getLogs"},
		{80, 24, "hng"},
	} {
		got := fixedModel(s, themes.Default(), c.w, c.h).View()
		if line := lineWith(got, s.Endpoints[0].Name+" "); !strings.Contains(line, "● closed    "+c.want) {
			t.Errorf("%d×%d: %s lacks %q:\n%s", c.w, c.h, s.Endpoints[0].Name, c.want, got)
		}
		if line := lineWith(got, s.Endpoints[1].Name+" "); strings.Contains(line, "hung") || strings.Contains(line, "hng") {
			t.Errorf("%d×%d: %s marked hung:\n%s", c.w, c.h, s.Endpoints[1].Name, got)
		}
	}
	// Held closed (or open), it is last for every method: no room taken
	// from HELD, which at 80 columns went behind "+2".
	s.Endpoints[0].Breaker.HeldClosed = true
	got := fixedModel(s, themes.Default(), 80, 24).View()
	if line := lineWith(got, s.Endpoints[0].Name+" "); !strings.Contains(line, "HELD") || strings.Contains(line, "hng") || strings.Contains(line, "+") {
		t.Errorf("80×24, held closed: want HELD and no hung badge:\n%s", got)
	}
	detail := strings.Join(fixedModel(s, themes.Default(), 160, 48).detailLines(200), "\n")
	if want := "hung: eth_getLogs unanswered past its deadline, asked after the others until 12:00:30 (30s left)"; !strings.Contains(detail, want) {
		t.Errorf("detail lacks %q:\n%s", want, detail)
	}
}
