package ui

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// A share just under 10% reads as 10%, like one just over: the decimal is
// for small shares, and "10.0%" beside "10%" in one column looks like two
// different figures.
func TestPercentages_OneDecimalOnlyBelowTen(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0%"}, {0.00004, "<0.1%"}, {0.042, "4.2%"}, {0.0994, "9.9%"},
		{0.09996, "10%"}, {0.1, "10%"}, {0.104, "10%"}, {0.5, "50%"},
	} {
		if got := pctText(c.v); got != c.want {
			t.Errorf("pctText(%v) = %q, want %q", c.v, got, c.want)
		}
		if got := strings.TrimSpace(fmtPct(c.v, true)); got != c.want {
			t.Errorf("fmtPct(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// The header's budget item keeps both figures whole at any traffic: at
// 120 reads/s the cap passes 100 units and "budget used 114.6/…" hid it.
func TestBudgetItem_BothFiguresFitAtAnyRate(t *testing.T) {
	for _, c := range []struct {
		cap, tokens float64
		want        string
	}{
		{10, 7.5, "budget used 2.5/10"},
		{137.2, 22.6, "budget used 115/138"},
		{1404, 405, "budget 999/1.4k"},
		{14_040, 2_000, "budget used 12k/14k"},
	} {
		got := budgetItem(engine.HedgeStatus{BudgetCap: c.cap, BudgetBurst: 10, BudgetTokens: c.tokens})
		if strings.TrimSpace(got) != c.want || len(got) != budgetWidth {
			t.Errorf("cap %v, tokens %v: %q, want %q in %d cells", c.cap, c.tokens, got, c.want, budgetWidth)
		}
	}
}

// A latency next to a unit's end rounded up into the next one's figures:
// 999.7ms printed "1000ms", which a lower bound's "≥" pushed past the 6
// cells, cut to "≥1000m"; 9.996s lost its unit ("≥10.00") and 9.96ms read
// "≥10.0m". Every figure, marked or not, is whole in its 6 cells and says
// the latency it stands for.
func TestLatencyCells_AWholeFigureAtEveryUnitsEnd(t *testing.T) {
	var ds []time.Duration
	for _, edge := range []time.Duration{10 * time.Millisecond, time.Second, 10 * time.Second} {
		for off := -time.Duration(edge / 100); off <= edge/100; off += edge / 2000 {
			ds = append(ds, edge+off)
		}
	}
	ds = append(ds, 100*time.Microsecond, 42*time.Millisecond, 131*time.Millisecond, 2500*time.Millisecond, 99*time.Second)
	for _, d := range ds {
		for _, cell := range []string{fmtMS(d), boundMS(d, true), pad(batchMark+msText(d), 6)} {
			text := strings.TrimLeft(strings.TrimSpace(cell), "≥"+batchMark)
			got, err := time.ParseDuration(text)
			if lipgloss.Width(cell) != 6 || err != nil || math.Abs(float64(got-d)) > 0.05*float64(d) {
				t.Errorf("%v reads %q", d, cell)
			}
		}
	}
}

// One call of a method in the last minute (0.017/s) read "0.0" in REQ/S,
// as if none had come; 0 stays 0.
func TestFmtRate_ALittleTrafficIsNotNone(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1.0 / 60: "<0.1", 0.05: "0.1", 2.5: "2.5", 27: "27"} {
		if got := strings.TrimSpace(fmtRate(v)); got != want {
			t.Errorf("fmtRate(%g) = %q, want %q", v, got, want)
		}
	}
}

// A serve up for a week (168h05m) read "up 168h0…" in the header, its
// uptime cut in its 6 cells: past 99 hours an age is in days.
func TestView_AWeekOfUptimeIsWhole(t *testing.T) {
	s := healthySnapshot()
	s.Started = s.Time.Add(-(168*time.Hour + 5*time.Minute))
	head := strings.Join(fixedModel(s, themes.Default(), 120, 36).headerLines(), "\n")
	if !strings.Contains(head, "up 7d00h ") {
		t.Errorf("a week's uptime:\n%s", head)
	}
	for _, d := range []time.Duration{59 * time.Second, 99*time.Hour + 59*time.Minute, 100 * time.Hour, 999*24*time.Hour + 23*time.Hour, 5000 * 24 * time.Hour} {
		if got := fmtAge(d); lipgloss.Width(got) > 6 {
			t.Errorf("fmtAge(%v) = %q, over 6 cells", d, got)
		}
	}
}

// An auto delay a hair under 100ms (99.97ms, a histogram's value) printed
// "100.0ms", 7 cells: the methods' DELAY column cut it to "100.0m". Every
// delay is whole in 6 cells and reads back as itself.
func TestFmtDelay_AWholeFigureAtEveryUnitsEnd(t *testing.T) {
	var ds []time.Duration
	for _, edge := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second} {
		for off := -time.Duration(edge / 100); off <= edge/100; off += edge / 2000 {
			ds = append(ds, edge+off)
		}
	}
	for _, d := range ds {
		got := fmtDelay(d)
		back, err := time.ParseDuration(got)
		if lipgloss.Width(got) > 6 || err != nil || math.Abs(float64(back-d)) > 0.01*float64(d) {
			t.Errorf("fmtDelay(%v) = %q", d, got)
		}
	}
	s := healthySnapshot()
	mst := s.Methods["eth_call"]
	mst.Hedge.Delay, mst.Hedge.DelaySource = 99970*time.Microsecond, "auto"
	s.Methods["eth_call"] = mst
	if row := lineWith(fixedModel(s, themes.Default(), 120, 36).View(), "eth_call"); !strings.Contains(row, " 100ms auto") {
		t.Errorf("eth_call's delay of 99.97ms:\n%s", row)
	}
}

// A share short of all never reads 100%: 698 rpcdash errors of 700
// requests (an endpoint failing 99.7 % of calls) read "err 698 100%" in
// the header, which says every request failed, while 2 were answered.
func TestPercentages_AShareShortOfAllIsNeverRead100(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{1, "100%"}, {698.0 / 700, "99.7%"}, {0.9999, "99.9%"}, {0.995, "99.5%"}, {0.994, "99%"}, {0.98, "98%"},
	} {
		if got := pctText(c.v); got != c.want {
			t.Errorf("pctText(%v) = %q, want %q", c.v, got, c.want)
		}
		if got := strings.TrimSpace(fmtPct(c.v, true)); got != c.want {
			t.Errorf("fmtPct(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	st := newStyles(themes.Default())
	if got := clientErrorsItem(engine.ClientStats{Requests: 700, Errors: 698}, st.hdr); !strings.Contains(got, "err 698 99.7%") {
		t.Errorf("header item %q, want err 698 99.7%%", got)
	}
	if got := clientErrorsItem(engine.ClientStats{Requests: 1200, Errors: 1199}, st.hdr); !strings.Contains(got, "err 1.2k 99% ") {
		t.Errorf("header item %q, want err 1.2k 99%% whole", got)
	}
	if got := clientErrorsItem(engine.ClientStats{Requests: 1145, Errors: 1145}, st.hdr); !strings.Contains(got, "err 1.1k 100%") {
		t.Errorf("header item %q, want err 1.1k 100%% when every request failed", got)
	}
}

// The header shows the budget's bucket more spent: the requests', marked,
// when they hold hedges back while the cost units have room.
func TestBudgetItem_ShowsTheBucketMoreSpent(t *testing.T) {
	for _, c := range []struct {
		h    engine.HedgeStatus
		want string
	}{
		{engine.HedgeStatus{BudgetBurst: 10, BudgetCap: 40, BudgetTokens: 36, BudgetRequestCap: 20, BudgetRequestTokens: 1}, "budget 19.0/20 req"},
		{engine.HedgeStatus{BudgetBurst: 10, BudgetCap: 40, BudgetTokens: 4, BudgetRequestCap: 20, BudgetRequestTokens: 19}, "budget used 36.0/40"},
		{engine.HedgeStatus{BudgetBurst: 10, BudgetCap: 10, BudgetTokens: 10}, "budget used 0.0/10"}, // an older engine: no requests' bucket
		// Both nearly full: the cost units, whichever is a little more spent.
		{engine.HedgeStatus{BudgetBurst: 10, BudgetCap: 45, BudgetTokens: 45, BudgetRequestCap: 30, BudgetRequestTokens: 29}, "budget used 0.0/45"},
		{engine.HedgeStatus{BudgetBurst: 10, BudgetCap: 45, BudgetTokens: 43, BudgetRequestCap: 30, BudgetRequestTokens: 27}, "budget used 2.0/45"},
		{engine.HedgeStatus{BudgetBurst: 10, BudgetCap: 45, BudgetTokens: 45, BudgetRequestCap: 30, BudgetRequestTokens: 27}, "budget 3.0/30 req"},
	} {
		if got := budgetItem(c.h); strings.TrimSpace(got) != c.want || len(got) != budgetWidth {
			t.Errorf("%+v: %q, want %q in %d cells", c.h, got, c.want, budgetWidth)
		}
	}
}
