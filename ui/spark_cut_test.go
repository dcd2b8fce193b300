package ui

import (
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
	}, st)
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
