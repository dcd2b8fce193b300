package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/rpcdash/rpcdash/themes"
)

// An endpoint whose head has not been seen for three probe intervals (a
// dead one) showed its last head plainly beside LAG "—", as if it were
// its head now. It is faint, as the figures of an endpoint that answers
// nothing are.
func TestView_ALostEndpointsHeadIsFaint(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	s := healthySnapshot()
	s.Settings.ProbeInterval = 5 * time.Second
	for i := range s.Endpoints {
		s.Endpoints[i].HeadSeenAt = s.Time.Add(-time.Second)
	}
	lost := &s.Endpoints[2]
	lost.Head, lost.HeadSeenAt = s.MaxHead-16, s.Time.Add(-4*time.Minute)
	for _, sz := range [][2]int{{160, 48}, {200, 50}} {
		m := fixedModel(s, themes.Default(), sz[0], sz[1])
		v := m.View()
		if line := lineWith(v, "quicknode "); !strings.Contains(line, m.styles.faint.Render("20999984")) {
			t.Errorf("%d×%d: the lost endpoint's last head is not faint: %q", sz[0], sz[1], line)
		}
		if line := lineWith(v, "alchemy "); strings.Contains(line, m.styles.faint.Render("21000000")) {
			t.Errorf("%d×%d: a head just seen is faint: %q", sz[0], sz[1], line)
		}
	}
}

// With a method's hedging turned off, its tuning view still drew "━━
// delay 63.2ms: 4.9% of primaries outlast it" and the line across the
// plot: no hedge goes out at it. The legend says hedging is off for it,
// and no delay line is drawn, on the plot (120×36) or the histogram
// (80×24).
func TestTuningView_HedgingOffDrawsNoDelay(t *testing.T) {
	md := tuningDistribution()
	md.Hedge.Enabled = false
	delay := "delay " + fmtDelay(md.Hedge.Delay)
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		v := ansi.Strip(tuningModel(healthySnapshot(), md, sz[0], sz[1]).View())
		body := strings.Join(strings.Split(v, "\n")[4:], "\n") // the title keeps the delay set: "hedging OFF (delay 88ms)"
		if strings.Contains(body, "━") || strings.Contains(body, delay+":") || strings.Contains(body, "◀ "+delay) {
			t.Errorf("%d×%d: hedging off, the view still draws its delay:\n%s", sz[0], sz[1], v)
		}
		if sz[0] == 120 && !strings.Contains(v, "hedging off for "+md.Method) {
			t.Errorf("%d×%d: the legend does not say hedging is off for %s:\n%s", sz[0], sz[1], md.Method, v)
		}
	}
}

// Words that said one thing twice: a drain's event read "active→drained
// drained; 2 requests in flight finish" (the engine's message, which
// scripts read from GET /v1/events, is left as it is), and applying a
// round row of the tuning view "✓ hedge delay of eth_getBalance → 50ms
// (50ms)".
func TestView_WordsSayItOnce(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 120, 36)
	if line := lineWith(m.View(), "drain    infura"); !strings.Contains(line, "active→drained; 2 requests in flight finish") {
		t.Errorf("drain event: %q", line)
	}
	md := tuningDistribution()
	m = tuningModel(healthySnapshot(), md, 120, 36)
	for i, r := range m.tuning.rows {
		if !r.policy.off && !r.policy.current && r.policy.quantile == 0 {
			m.tuning.cursor = i
			break
		}
	}
	m = pressKeys(m, "enter")
	if d := m.confirm.act.desc; m.overlay != overlayConfirm || strings.Contains(d, "(") || !strings.HasSuffix(d, "→ "+m.tuning.rows[m.tuning.cursor].label()) {
		t.Errorf("a round row's action: %q", d)
	}
}

// A delay set with = or + was said in the key's spelling ("→ 2s", "→ 0s")
// beside the console's own on the same line's next message ("is 2.0s",
// "is 0ms"): every status line says a delay one way.
func TestView_DelaysAreSaidOneWay(t *testing.T) {
	for typed, want := range map[string]string{"2s": "→ 2.0s", "0s": "→ 0ms", "0": "→ 0ms", "1500ms": "→ 1.5s", "auto": "→ auto"} {
		m := fixedModel(healthySnapshot(), themes.Default(), 120, 36)
		mm, _ := m.setDelayOf("", typed)
		m = mm.(Model)
		if !strings.Contains(m.status.text, want) {
			t.Errorf("= %s: status %q, want %q", typed, m.status.text, want)
		}
	}
	s := healthySnapshot()
	s.Hedge.Delay = 2 * time.Second
	m := pressKeys(fixedModel(s, themes.Default(), 120, 36), "+")
	if !strings.Contains(m.status.text, "is 2.0s") {
		t.Errorf("+ at the top: %q", m.status.text)
	}
}
