package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// secondsOf is one answered second per RTT given, from t0 on.
func secondsOf(t0 time.Time, rtts ...time.Duration) []engine.SeriesPoint {
	ps := make([]engine.SeriesPoint, 0, len(rtts))
	for i, rtt := range rtts {
		ps = append(ps, engine.SeriesPoint{Start: t0.Add(time.Duration(i) * time.Second), Requests: 1, Answers: 1, MeanRTT: rtt, MaxRTT: rtt})
	}
	return ps
}

// One slow second (a tail answer at 20 times the pace) is drawn past the
// scale, ▲, and the others keep theirs: drawn in proportion to it, every
// other second on screen was ▁ until it scrolled out, 40 ms and 60 ms
// alike (the demo's tailed endpoint, every few seconds).
func TestSpark_OneSlowSecondIsDrawnPastTheScaleNotFlatteningTheRest(t *testing.T) {
	st := newStyles(themes.Default())
	t0 := time.Unix(1_700_000_000, 0).UTC()
	steady := make([]time.Duration, 20)
	for i := range steady {
		steady[i] = 40 * time.Millisecond
		if i%2 == 1 {
			steady[i] = 60 * time.Millisecond
		}
	}
	tailed := append([]time.Duration(nil), steady...)
	tailed[7] = 800 * time.Millisecond
	a, b := newSpark(20, st), newSpark(20, st)
	a.push(secondsOf(t0, steady...))
	b.push(secondsOf(t0, tailed...))
	top := drawShared(map[string]*spark{"steady": a, "tailed": b}, st)
	got, tail := []rune(ansi.Strip(a.view())), []rune(ansi.Strip(b.view()))
	if top != 60 {
		t.Errorf("scale topped at %v ms; want 60, the highest second but the one far above the rest", top)
	}
	if tail[7] != pastScale {
		t.Errorf("the 800 ms second drawn %q, want %q (sparkline %q)", tail[7], pastScale, string(tail))
	}
	if got[0] == got[1] || got[1] != '█' {
		t.Errorf("40 ms and 60 ms seconds beside one of 800 ms drawn %q: want 60 ms full and 40 ms lower", string(got))
	}
	if title := sparkTitle(20, top); title != "RTT 20s █60ms" {
		t.Errorf("title %q, want the scale's top", title)
	}
}

// A whole row slowed (a latency fault) is more than a few seconds: it sets
// the scale, and the others are drawn low beside it, not it past the
// scale.
func TestSpark_ARowSlowedThroughoutSetsTheScale(t *testing.T) {
	st := newStyles(themes.Default())
	t0 := time.Unix(1_700_000_000, 0).UTC()
	fast, slow := make([]time.Duration, 20), make([]time.Duration, 20)
	for i := range fast {
		fast[i], slow[i] = 42*time.Millisecond, 290*time.Millisecond
	}
	slow[3] = 310 * time.Millisecond
	f, s := newSpark(20, st), newSpark(20, st)
	f.push(secondsOf(t0, fast...))
	s.push(secondsOf(t0, slow...))
	if top := drawShared(map[string]*spark{"fast": f, "slow": s}, st); top != 310 {
		t.Errorf("scale topped at %v ms; want 310, the slowed row's highest", top)
	}
	if v := ansi.Strip(s.view()); strings.ContainsRune(v, pastScale) || !strings.Contains(v, "█") {
		t.Errorf("the slowed row drawn %q: want it at the top of the scale, none past it", v)
	}
	if v := ansi.Strip(f.view()); strings.ContainsAny(v, "▄▅▆▇█") {
		t.Errorf("42 ms beside 290 ms drawn %q: want it low", v)
	}
}

// The title says what a full cell stands for as room allows: with the span
// when both fit, alone in a 10-cell column, neither when nothing was
// answered.
func TestSpark_TitleNamesTheScaleAsRoomAllows(t *testing.T) {
	for _, c := range []struct {
		width int
		top   float64
		want  string
	}{
		{20, 85, "RTT 20s █85ms"},
		{10, 85, "RTT █85ms"},
		{10, 1500, "RTT █1.50s"},
		{20, 0, "RTT 20s"},
	} {
		if got := sparkTitle(c.width, c.top); got != c.want {
			t.Errorf("sparkTitle(%d, %v) = %q, want %q", c.width, c.top, got, c.want)
		}
	}
}
