package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// A second whose attempts were all cut short because another endpoint
// answered first (no answer to time, no failure) had traffic: it is drawn
// as a mark, not left blank, which the legend keeps for a second with no
// traffic. An endpoint slow enough to lose every race read as idle.
func TestSpark_SecondOfOnlyCutShortAttemptsIsNotBlank(t *testing.T) {
	st := newStyles(themes.Default())
	s := newSpark(4, st)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	s.push([]engine.SeriesPoint{
		{Start: t0, Requests: 2, Answers: 2, MeanRTT: 40 * time.Millisecond, MaxRTT: 41 * time.Millisecond},
		{Start: t0.Add(time.Second)}, // no traffic
		{Start: t0.Add(2 * time.Second), Requests: 5},
		{Start: t0.Add(3 * time.Second), Requests: 1, Answers: 1, MeanRTT: 40 * time.Millisecond, MaxRTT: 40 * time.Millisecond},
	})
	drawShared(map[string]*spark{"s": s}, st)
	cells := []rune(ansi.Strip(s.view()))
	if len(cells) != 4 {
		t.Fatalf("sparkline %q: want 4 cells", string(cells))
	}
	if cells[1] != ' ' {
		t.Errorf("a second with no traffic drawn %q, want blank (sparkline %q)", cells[1], string(cells))
	}
	if cells[2] != '·' {
		t.Errorf("a second of 5 attempts all cut short drawn %q, want the cut-short mark · (sparkline %q)", cells[2], string(cells))
	}
}

// Every endpoint's sparkline is drawn to one scale, the highest second on
// any of them: each scaled to its own highest, an endpoint at 42 ms and one
// at 290 ms under a latency fault drew the same full cells, and rows could
// not be compared (console audit, stop 56).
func TestSpark_EveryEndpointIsDrawnToOneScale(t *testing.T) {
	st := newStyles(themes.Default())
	t0 := time.Unix(1_700_000_000, 0).UTC()
	steady := func(rtt time.Duration) []engine.SeriesPoint { return secondsOf(t0, rtt, rtt, rtt, rtt) }
	fast, slow := newSpark(4, st), newSpark(4, st)
	fast.push(steady(42 * time.Millisecond))
	slow.push(steady(290 * time.Millisecond))
	drawShared(map[string]*spark{"fast": fast, "slow": slow}, st)
	f, s := ansi.Strip(fast.view()), ansi.Strip(slow.view())
	if s != "████" {
		t.Errorf("the slower endpoint's sparkline %q, want full cells: it sets the scale", s)
	}
	if f == s || strings.ContainsAny(f, "▆▇█") {
		t.Errorf("an endpoint at 42 ms beside one at 290 ms drawn %q (the other %q): want a seventh of the height", f, s)
	}
	// The slow one gone from the screen, the fast one sets the scale.
	slow.push([]engine.SeriesPoint{{Start: t0.Add(4 * time.Second)}, {Start: t0.Add(5 * time.Second)}, {Start: t0.Add(6 * time.Second)}, {Start: t0.Add(7 * time.Second)}})
	drawShared(map[string]*spark{"fast": fast, "slow": slow}, st)
	if f := ansi.Strip(fast.view()); f != "████" {
		t.Errorf("alone on screen: %q, want full cells", f)
	}
}
