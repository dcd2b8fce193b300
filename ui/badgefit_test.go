package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// At 80 columns the badges have 12 cells. Seen live: a 2-minute fault on
// an endpoint its breaker cap held closed read "FLT 1m58s H…", the second
// badge cut to a letter. The narrow fault badge counts minutes past the
// first ("FLT 2m"), and badges that still do not fit are counted ("+2"),
// never cut mid-word.
func TestView_BadgesThatDoNotFitAreCountedNotCut(t *testing.T) {
	s := healthySnapshot()
	ep := &s.Endpoints[1] // infura
	ep.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Rate: 0.3, Latency: 400 * time.Millisecond, Duration: 2 * time.Minute,
		Since: t0.Add(-2 * time.Second), Expires: t0.Add(118 * time.Second)}
	ep.Breaker.HeldClosed = true
	got := lineWith(fixedModel(s, themes.Default(), 80, 24).View(), "infura")
	if !strings.Contains(got, "FLT 2m HELD") {
		t.Errorf("80×24: want FLT 2m HELD: %q", got)
	}

	ep.Drained, ep.BackoffUntil, ep.LagExcluded, ep.Lag = true, t0.Add(20*time.Second), true, 9
	got = lineWith(fixedModel(s, themes.Default(), 80, 24).View(), "infura")
	if !strings.Contains(got, "FLT 2m +4") || strings.Contains(got, "…") {
		t.Errorf("80×24, five badges: want the first and +4, nothing cut: %q", got)
	}
	if got = lineWith(fixedModel(s, themes.Default(), 120, 36).View(), "infura"); !strings.Contains(got, "FLT 2m DRAINED +3") || strings.Contains(got, "…") {
		t.Errorf("120×36, five badges: a badge cut: %q", got)
	}
}

func TestFmtLeftCoarse(t *testing.T) {
	for d, want := range map[time.Duration]string{
		42 * time.Second: "42s", 59 * time.Second: "59s", 59*time.Second + 1: "1m", 118 * time.Second: "2m",
		time.Hour: "60m", time.Hour + 1: "2h", 7 * 24 * time.Hour: "7d",
	} {
		if got := fmtLeftCoarse(d); got != want {
			t.Errorf("fmtLeftCoarse(%s) = %q, want %q", d, got, want)
		}
	}
}

// Narrow, a whole endpoint's 429 back-off reads BOFF: it read 429, one
// letter from 429m (one method backing off), and the two mean different
// things to an operator (out of routing, or not).
func TestView_NarrowBackoffBadgesAreToldApart(t *testing.T) {
	s := healthySnapshot()
	ep := &s.Endpoints[1] // infura
	ep.Fault = &engine.FaultInfo{Mode: engine.Fault429, Rate: 1, Duration: 15 * time.Second, Since: t0.Add(-2 * time.Second), Expires: t0.Add(13 * time.Second)}
	ep.BackoffUntil = t0.Add(4 * time.Second)
	if got := lineWith(fixedModel(s, themes.Default(), 80, 24).View(), "infura"); !strings.Contains(got, "BOFF") || strings.Contains(got, " 429 ") {
		t.Errorf("80×24, the whole endpoint backing off: %q, want BOFF", got)
	}
}
