package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// busyDetailSnapshot: alchemy under a fault, excluded, with errors, and
// named in three shared-fate warnings, as a pool of sims on one loopback
// address is: its detail is longer than the pane beside the methods.
func busyDetailSnapshot() engine.Snapshot {
	s := healthySnapshot()
	a := &s.Endpoints[0]
	a.Fault = &engine.FaultInfo{Mode: engine.FaultLatency, Rate: 0.1, Latency: 100 * time.Millisecond, Duration: 20 * time.Second,
		Since: t0.Add(-5 * time.Second), Expires: t0.Add(15 * time.Second)}
	a.Exclusions = []string{"manual: excluded for the test"}
	a.Routable = false
	s.Routable--
	a.Errors = []engine.EndpointError{{Time: t0.Add(-2 * time.Second), Text: "HTTP 502"}, {Time: t0.Add(-3 * time.Second), Text: "dial tcp: connection refused"}}
	s.Warnings = []engine.Warning{
		{Endpoints: []string{"alchemy", "infura"}, Reason: "ip", Text: "alchemy and infura resolve to the same IP 127.0.0.1: one outage takes both"},
		{Endpoints: []string{"alchemy", "quicknode"}, Reason: "ip", Text: "alchemy and quicknode resolve to the same IP 127.0.0.1: one outage takes both"},
		{Endpoints: []string{"alchemy"}, Reason: "asn-unknown", Text: "ASN of alchemy unknown (private address): cannot confirm it is independent"},
	}
	return s
}

// The detail beside the methods was cut at the pane's last row with no
// word of it, and what went were its last lines: the fault, the
// exclusions, the last errors (at 250×70 a bare "last errors:" heading).
// The urgent lines come first now, a cut says so, and the first error
// shares its heading's line.
func TestView_DetailPaneKeepsFaultExclusionsAndErrorsAndSaysWhenCut(t *testing.T) {
	for _, sz := range [][2]int{{150, 40}, {160, 48}, {250, 70}} {
		m := fixedModel(busyDetailSnapshot(), themes.Default(), sz[0], sz[1])
		v := m.View()
		checkFits(t, v, sz[0], sz[1])
		for _, want := range []string{"fault: latency +100ms on 10% of requests, 15s left", "excluded: manual: excluded for the test", "last errors: 11:59:58 HTTP 502"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: the detail pane lacks %q:\n%s", sz[0], sz[1], want, v)
			}
		}
		if strings.Contains(v, "last errors: ") && !strings.Contains(v, "last errors: 11:") {
			t.Errorf("%dx%d: a bare last errors heading:\n%s", sz[0], sz[1], v)
		}
		cut := m.detailCut()
		if said := strings.Contains(v, "more lines: enter shows them all"); said != cut {
			t.Errorf("%dx%d: the pane is cut %v, says so %v:\n%s", sz[0], sz[1], cut, said, v)
		}
		if sz[0] == 150 && !cut {
			t.Errorf("150x40: the busy detail should not fit its pane (the test shows nothing):\n%s", v)
		}
		// enter shows it all where the pane is cut; else says it is there.
		m = pressKeys(m, "enter")
		if cut != (m.overlay == overlayDetail) {
			t.Errorf("%dx%d: cut %v, enter opened overlay %d", sz[0], sz[1], cut, m.overlay)
		}
		if cut && !strings.Contains(m.View(), "ASN of alchemy unknown") {
			t.Errorf("%dx%d: enter does not show the detail's last line:\n%s", sz[0], sz[1], m.View())
		}
	}
}

// At 80×24 the detail box said "… 3 more lines (a taller terminal shows
// them)" and could not be scrolled: j/k (and the arrows) scroll it now, the
// hint saying what is above and below; every line can be read.
func TestView_DetailBoxScrollsToEveryLine(t *testing.T) {
	m := pressKeys(fixedModel(busyDetailSnapshot(), themes.Default(), 80, 24), "enter")
	all := m.detailLines(m.overlayWidth() - 4)
	seen := map[string]bool{}
	look := func() string {
		v := m.View()
		checkFits(t, v, 80, 24)
		for _, l := range boxLines(v) {
			seen[l] = true
		}
		return v
	}
	v := look()
	if !strings.Contains(v, "↓ ") || !strings.Contains(v, "more below") || strings.Contains(v, "more above") || !strings.Contains(v, "fault: latency") {
		t.Fatalf("the box at its top: no word of what is below, or the fault is not among its first lines:\n%s", v)
	}
	for range len(all) + 3 { // past the end: it stops there
		m = pressKeys(m, "j")
		v = look()
	}
	if strings.Contains(v, "more below") || !strings.Contains(v, "more above") {
		t.Fatalf("at the end:\n%s", v)
	}
	for _, l := range all {
		if l := strings.TrimSpace(ansi.Strip(l)); !seen[l] {
			t.Errorf("never shown while scrolling: %q", l)
		}
	}
	m = pressKeys(m, "k")
	if v := m.View(); !strings.Contains(v, "↓ 1 more below") {
		t.Errorf("k from the end:\n%s", v)
	}
	m = pressKeys(m, "g")
	if v := m.View(); strings.Contains(v, "more above") {
		t.Errorf("g: not back at the top:\n%s", v)
	}
	// A new opening starts at the top.
	m = pressKeys(m, "j", "j", "esc", "enter")
	if m.detailTop != 0 {
		t.Errorf("reopened at line %d", m.detailTop)
	}
}

// The same in a running console, in process and attached: a fault
// injected on the engine is in the 80×24 detail box, and so is each
// line the box scrolls to.
func TestUpdate_DetailBoxShowsTheFaultAndScrolls(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		if err := r.eng.InjectFault(engine.ActorAdmin, "alpha", engine.FaultSpec{Mode: engine.FaultLatency, Rate: 0.1,
			Latency: engine.Duration(100 * time.Millisecond), Duration: engine.Duration(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		m := press(t, console(t, sp, 80, 24, false), "enter")
		var shown strings.Builder
		for range 40 {
			shown.WriteString(ansi.Strip(m.View()))
			m = press(t, m, "j")
		}
		if !strings.Contains(shown.String(), "fault: latency +100ms on 10% of requests") {
			t.Fatalf("the detail never shows the fault:\n%s", m.View())
		}
		for _, l := range m.detailLines(m.overlayWidth() - 4) {
			if l := strings.TrimSpace(ansi.Strip(l)); !strings.Contains(shown.String(), l) {
				t.Errorf("never shown: %q", l)
			}
		}
		wantCalls(t, sp)
	})
}

// An error longer than the line goes on under its own text, not under the
// heading: the list still reads as a list.
func TestView_DetailLastErrorsWrapUnderTheirText(t *testing.T) {
	s := busyDetailSnapshot()
	s.Endpoints[0].Errors = append(s.Endpoints[0].Errors, engine.EndpointError{Time: t0.Add(-4 * time.Second),
		Text: "HTTP 500: JSON-RPC error -32603: upstream error while reading the answer of the node behind the load balancer"})
	m := fixedModel(s, themes.Default(), 80, 24)
	var errs []string
	for _, l := range m.detailLines(72) {
		if l := ansi.Strip(l); strings.HasPrefix(l, "last errors: ") || strings.HasPrefix(l, strings.Repeat(" ", 13)) {
			errs = append(errs, strings.TrimRight(l, " "))
		}
	}
	if len(errs) < 4 || !strings.HasPrefix(errs[2], "             11:59:56 HTTP 500") {
		t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
	}
	for _, l := range errs[3:] { // the long one's next lines, under its text
		if !strings.HasPrefix(l, "             ") || l[13] == ' ' || l[13] == '1' {
			t.Fatalf("errors:\n%s", strings.Join(errs, "\n"))
		}
	}
}

// The same error five times in a row took five lines of the detail box
// ("20:57:11 injected fault: HTTP 500" ×5 at 80×24), pushing the score
// and independence below its end. Alike in a row, they are one entry that
// says how many of the kept errors before it are the same, and since when.
func TestView_DetailLastErrorsAlikeInARowAreOneEntry(t *testing.T) {
	s := busyDetailSnapshot()
	s.Endpoints[0].Errors = nil
	for i := range 5 {
		s.Endpoints[0].Errors = append(s.Endpoints[0].Errors, engine.EndpointError{Time: t0.Add(-time.Duration(2+i) * time.Second), Text: "injected fault: HTTP 500"})
	}
	s.Endpoints[0].Errors = append(s.Endpoints[0].Errors, engine.EndpointError{Time: t0.Add(-9 * time.Second), Text: "HTTP 502"})
	m := fixedModel(s, themes.Default(), 80, 24)
	var errs []string
	for _, l := range m.detailLines(72) {
		if l := ansi.Strip(l); strings.HasPrefix(l, "last errors: ") || strings.HasPrefix(l, strings.Repeat(" ", 13)) {
			errs = append(errs, strings.TrimSpace(strings.TrimPrefix(l, "last errors: ")))
		}
	}
	want := []string{"11:59:58 injected fault: HTTP 500 (the 4 before it too, back to 11:59:54)", "11:59:51 HTTP 502"}
	if strings.Join(errs, " ") != strings.Join(want, " ") || len(errs) > 3 {
		t.Fatalf("errors:\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
}
