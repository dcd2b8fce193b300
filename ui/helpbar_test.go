package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/themes"
)

// The help bar was cut at its end: "? help" and "q quit", its last items,
// were on screen at no width under 200 columns, and at 80 the status
// line's "? for all keys" was cut too ("? …"), so nothing on an 80×24
// screen said how to see the keys or quit. They are kept at every width,
// the keys before them going, whole, for a "…"; the tuning view keeps
// "esc/q leave".
func TestView_HelpBarKeepsHelpAndQuitAtEveryWidth(t *testing.T) {
	for w := 80; w <= 200; w += 10 {
		for _, ro := range []bool{false, true} {
			m := fixedModel(healthySnapshot(), themes.Default(), w, 36)
			if ro {
				m.opts.ReadOnly, m.keys = true, newKeyMap(true)
			}
			bar := ansi.Strip(m.helpBar())
			if !strings.Contains(bar, "? help") || !strings.Contains(bar, "q quit") || ansi.StringWidth(bar) > w {
				t.Errorf("%d columns, read-only %v: help bar %q", w, ro, bar)
			}
			if !strings.HasPrefix(strings.TrimPrefix(bar, "READ-ONLY "), "tab next panel") {
				t.Errorf("%d columns: the bar's first key went: %q", w, bar)
			}
		}
		m := tuningModel(healthySnapshot(), tuningDistribution(), w, 36)
		if bar := ansi.Strip(m.helpBar()); !strings.Contains(bar, "esc/q leave") || ansi.StringWidth(bar) > w {
			t.Errorf("%d columns, tuning view: help bar %q", w, bar)
		}
	}
}

// The status line's hint was cut at 80 columns mid-word, "(tab, ↑/↓ to
// choose; ? f…": it gives as much of itself as fits, in whole words.
func TestView_StatusLineHintIsWholeOrGone(t *testing.T) {
	for w := 80; w <= 130; w += 5 {
		for _, frozen := range []bool{false, true} {
			m := fixedModel(healthySnapshot(), themes.Default(), w, 36)
			m.frozen, m.frozenAt = frozen, fixedNow()
			line := strings.TrimRight(ansi.Strip(m.statusLineView()), " ")
			if strings.Contains(line, "…") || !strings.HasSuffix(line, "all methods") && !strings.HasSuffix(line, ")") {
				t.Errorf("%d columns, frozen %v: status line %q", w, frozen, line)
			}
			if w >= 120 && !strings.Contains(line, "? for all keys") {
				t.Errorf("%d columns, frozen %v: status line %q has room for the whole hint", w, frozen, line)
			}
		}
	}
}
