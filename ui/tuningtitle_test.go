package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The tuning view's title at every width from 80 columns: the method, the
// delay in force and its source (or hedging OFF), the primaries, the
// window and how many were cut short, each whole. At 80×24 it was cut
// "… · 5000 primaries over 5m…", the censored count gone.
func TestTuningView_TitleKeepsEveryFigureAt80Columns(t *testing.T) {
	base := tuningDistribution()
	for _, method := range []string{"eth_getBalance", "eth_getTransactionCount", "debug_traceBlockByNumber"} {
		for _, off := range []bool{false, true} {
			md := base
			md.Method, md.Hedge.Enabled = method, !off
			n, cut := md.Primary.Samples(), md.Primary.Censored
			delay := fmtDelay(md.Hedge.Delay)
			want := []string{method, delay, "auto p95", fmt.Sprint(n), "5m", fmt.Sprintf("%d cut short", cut)}
			if off {
				want = []string{method, "hedging OFF", delay, fmt.Sprint(n), "5m", fmt.Sprintf("%d cut short", cut)}
			}
			for w := 80; w <= 200; w++ {
				m := tuningModel(healthySnapshot(), md, w, 24)
				title := ansi.Strip(m.tuningTitle(w))
				if !strings.Contains(ansi.Strip(m.View()), title) {
					t.Fatalf("%s, %d columns: the view does not show its title %q", method, w, title)
				}
				if strings.Contains(title, "…") {
					t.Errorf("%s, hedging off %v, %d columns: title %q cut", method, off, w, title)
					continue
				}
				for _, s := range want {
					if !strings.Contains(title, s) {
						t.Errorf("%s, hedging off %v, %d columns: title %q lacks %q", method, off, w, title, s)
					}
				}
			}
		}
	}
	// A method name too long for the narrowest form is what is cut: the
	// figures stay.
	md := base
	md.Method = "debug_" + strings.Repeat("x", 100)
	m := tuningModel(healthySnapshot(), md, 80, 24)
	title := m.tuningTitle(80)
	for _, s := range []string{"debug_xx", "…", fmtDelay(md.Hedge.Delay), fmt.Sprintf("%d in 5m, %d cut short", md.Primary.Samples(), md.Primary.Censored)} {
		if !strings.Contains(ansi.Strip(title), s) {
			t.Errorf("a 106-character method at 80 columns: title %q lacks %q", ansi.Strip(title), s)
		}
	}
}

// Primaries timed by rpcdash's own stall are not in the distribution; the
// title said "N primaries" of what it holds, and nothing of them, so on a
// loaded machine the count fell short of the requests sent with nothing
// on screen to say why. With any untimed, every form says how many.
func TestTuningView_TitleSaysHowManyPrimariesWereLeftUntimed(t *testing.T) {
	md := tuningDistribution()
	md.Untimed = 7
	for w := 80; w <= 200; w++ {
		m := tuningModel(healthySnapshot(), md, w, 24)
		title := ansi.Strip(m.tuningTitle(w))
		if !strings.Contains(ansi.Strip(m.View()), title) {
			t.Fatalf("%d columns: the view does not show its title %q", w, title)
		}
		if strings.Contains(title, "…") || !strings.Contains(title, "7 untimed") || !strings.Contains(title, fmt.Sprintf("%d cut short", md.Primary.Censored)) {
			t.Errorf("%d columns: title %q; want it whole, with \"7 untimed\" and the censored count", w, title)
		}
	}
	md.Untimed = 0
	if title := ansi.Strip(tuningModel(healthySnapshot(), md, 200, 24).tuningTitle(200)); strings.Contains(title, "untimed") {
		t.Errorf("no primary untimed, title %q speaks of some", title)
	}
}
