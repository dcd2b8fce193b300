package ui

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rpcdash/rpcdash/themes"
)

// An endpoint far behind (a node resyncing, 123456 blocks) showed LAG
// 1234 in the table, its 4 cells cutting the figure and the ! that says
// it is excluded, where rpcdash status said 123456.
func TestView_ALagIsNeverCut(t *testing.T) {
	s := healthySnapshot()
	ep := &s.Endpoints[2]
	ep.Lag, ep.LagExcluded, ep.Head = 123456, true, s.MaxHead-123456
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 36}, {160, 48}} {
		v := fixedModel(s, themes.Default(), size[0], size[1]).View()
		row := lineWith(v, "quicknode")
		if !strings.Contains(row, " 123456! ") {
			t.Errorf("%d×%d: the lag 123456 excluded is not whole in its row:\n%s", size[0], size[1], row)
		}
		if head := lineWith(v, "LAG"); endCell(head, "LAG") != endCell(row, "123456!") {
			t.Errorf("%d×%d: LAG is not over its figure:\n%s\n%s", size[0], size[1], head, row)
		}
	}
}

// endCell is the cell just after s in line.
func endCell(line, s string) int {
	i := strings.Index(line, s)
	if i < 0 {
		return -1
	}
	return utf8.RuneCountInString(line[:i+len(s)])
}

// An endpoint answering a garbage head (sim head_fixed 999999999999, a
// misconfigured node or a proxy) showed HEAD 9999999999 beside its AHEAD
// badge at 160 columns: the column's 10 cells cut two digits off.
func TestView_AHeadIsNeverCut(t *testing.T) {
	s := healthySnapshot()
	s.Endpoints[2].Head = 999_999_999_999
	row := lineWith(fixedModel(s, themes.Default(), 160, 48).View(), "quicknode")
	if !strings.Contains(row, " 999999999999 ") {
		t.Errorf("the head 999999999999 is not whole:\n%s", row)
	}
}

// An endpoint whose head was never seen (refusing connections since
// start, every probe failed) showed LAG 0, in sync, beside its "—"
// latencies; rpcdash status said 0 too. Its lag is unknown: "—".
func TestView_ALagBeforeAnyHeadIsADash(t *testing.T) {
	s := healthySnapshot()
	ep := &s.Endpoints[2]
	ep.Head, ep.Lag, ep.LagExcluded = 0, 0, false
	for _, size := range [][2]int{{80, 24}, {120, 36}, {160, 48}} {
		v := fixedModel(s, themes.Default(), size[0], size[1]).View()
		if cell, other := lagCells(t, v, "quicknode", s.Endpoints[0].Name); cell != "—" || other != "0" {
			t.Errorf("%d×%d: LAG of an endpoint with no head reads %q, want —; of one in sync %q, want 0:\n%s", size[0], size[1], cell, other, v)
		}
	}
}

// lagCells is the LAG cell of the rows naming name and other in view v.
func lagCells(t *testing.T, v, name, other string) (string, string) {
	t.Helper()
	head, row, orow := lineWith(v, "LAG"), lineWith(v, name), lineWith(v, other)
	at := endCell(head, "LAG")
	if at < 0 || at > utf8.RuneCountInString(row) || at > utf8.RuneCountInString(orow) {
		t.Fatalf("no LAG column:\n%s\n%s", head, row)
	}
	return string([]rune(row)[at-1]), string([]rune(orow)[at-1])
}

// An endpoint whose head has not been seen for three probe intervals (down,
// its probes failing) showed LAG 0: the engine carries its last head
// forward at the chain's pace. One killed for 4 minutes read in sync and
// came back 239 blocks behind. Its lag is unknown: "—".
func TestView_ALagNoHeadWasSeenForIsADash(t *testing.T) {
	s := healthySnapshot()
	if s.Settings.ProbeInterval <= 0 {
		s.Settings.ProbeInterval = 5 * time.Second
	}
	for i := range s.Endpoints {
		s.Endpoints[i].HeadSeenAt = s.Time.Add(-time.Second)
	}
	ep := &s.Endpoints[2]
	ep.Lag, ep.LagExcluded = 0, false
	ep.HeadSeenAt = s.Time.Add(-3*s.Settings.ProbeInterval - time.Second)
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		v := fixedModel(s, themes.Default(), size[0], size[1]).View()
		if cell, other := lagCells(t, v, "quicknode", s.Endpoints[0].Name); cell != "—" || other != "0" {
			t.Errorf("%d×%d: LAG of an endpoint whose head was last seen %s ago reads %q, want —; of one just seen %q, want 0:\n%s", size[0], size[1], s.Time.Sub(ep.HeadSeenAt), cell, other, v)
		}
	}
}
