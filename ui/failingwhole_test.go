package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/themes"
)

// The EVERY ENDPOINT FAILING banner was cut to two lines ("…
// breaker.max_open_share keeps breakers…" at 120×36), and once over it
// was padded to them, leaving a blank line under the header. It is whole
// within the width, and held after its end on no more lines than it took,
// none of them blank.
func TestView_EveryEndpointFailingBannerIsWholeAndLeavesNoBlankLine(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(everyEndpointFailing(), themes.Default(), sz[0], sz[1])
		live := m.bannerLines()
		got := strings.Join(strings.Fields(bannerText(m)), " ")
		for _, want := range []string{"breaker.max_open_share", "c clears the selected one's", "Out: alchemy: breaker open, reads still fail over to it last."} {
			if !strings.Contains(got, want) {
				t.Errorf("%d×%d: the banner lacks %q: %q", sz[0], sz[1], want, got)
			}
		}
		if strings.Contains(got, "…") {
			t.Errorf("%d×%d: the banner is cut: %q", sz[0], sz[1], got)
		}
		checkFits(t, m.View(), sz[0], sz[1])

		calm := healthySnapshot()
		calm.Time = t0.Add(time.Second)
		m.onSnapshot(snapshotMsg{snap: calm})
		held := m.bannerLines()
		if len(held) == 0 || len(held) > len(live) || !strings.Contains(bannerText(m), "EVERY ENDPOINT FAILING over ") {
			t.Errorf("%d×%d: held over %d lines (%d live): %q", sz[0], sz[1], len(held), len(live), bannerText(m))
		}
		for i, l := range held {
			if strings.TrimSpace(ansi.Strip(l)) == "" {
				t.Errorf("%d×%d: held banner line %d is blank: %q", sz[0], sz[1], i, bannerText(m))
			}
		}
		checkFits(t, m.View(), sz[0], sz[1])
	}
}
