package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// Twelve endpoints at 80×24: the table showed the first eight and nothing
// said four more were below it, one of them with its breaker open, while
// the header counted 11/12 routable. A table taller than its panel now
// gives its last line to what is out of sight, above and below.
func TestView_RowsOutOfSightAreCounted(t *testing.T) {
	s := healthySnapshot()
	for i := 3; i < 12; i++ {
		s.Endpoints = append(s.Endpoints, endpoint(fmt.Sprintf("extra%02d", i), "p", "r", "d9", 40*time.Millisecond, 90*time.Millisecond))
	}
	broken := &s.Endpoints[10]
	broken.Breaker.State, broken.Routable = engine.BreakerOpen, false
	s.Routable = 11
	for i := range 8 {
		s.Methods[fmt.Sprintf("eth_extra%d", i)] = method(engine.ClassRead, 1, 40*time.Millisecond, 90*time.Millisecond, 160*time.Millisecond, 88*time.Millisecond, "auto")
	}
	m := fixedModel(s, themes.Default(), 80, 24)
	epRows, _, _ := m.panelRows(m.layout(), m.bodyRows())
	shown := epRows - 2 // the column titles and the count take a line each
	v := m.View()
	below := fmt.Sprintf("↓ %d more below, 1 of them not routable (j/k)", len(s.Endpoints)-shown)
	if !strings.Contains(v, below) || strings.Contains(v, s.Endpoints[shown].Name) {
		t.Errorf("want the last %d endpoints counted, %q:\n%s", len(s.Endpoints)-shown, below, v)
	}
	if !strings.Contains(v, "more below (j/k)") {
		t.Errorf("the methods out of sight are not counted:\n%s", v)
	}

	m = pressKeys(m, strings.Split(strings.Repeat("j", 11), "")...)
	v = m.View()
	above := fmt.Sprintf("↑ %d more above (j/k)", len(s.Endpoints)-shown)
	if !strings.Contains(v, above) || !strings.Contains(v, "extra11") || strings.Contains(v, "\n  alchemy ") {
		t.Errorf("at the last endpoint want %q:\n%s", above, v)
	}
	if n := strings.Count(v, "\n") + 1; n != 24 {
		t.Errorf("%d lines at 80×24", n)
	}
}
