package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// histogram draws the distribution in round log buckets (1, 1.5, 2, 3, 5,
// 7 × 10^k ms), one row each: exact answers as a bar, the censored count
// beside it, the bucket holding the delay marked. At most rows lines:
// neighbours with the fewest primaries fold first, but never into the
// delay's bucket beyond maxDelayBucketSpan, so that where the delay falls
// reads as a range that means something (not "50ms–2.00s").
func (m Model) histogram(width, rows int) []string {
	t, st := m.tuning, m.styles
	p := t.dist.Primary
	if p.Samples() == 0 {
		return []string{st.faint.Render("no primaries in the window yet")}
	}
	type bin struct {
		lo, hi      time.Duration
		exact, cens int64
	}
	cur := t.dist.Hedge.Delay
	if !t.dist.Hedge.Enabled {
		cur = -1 // hedging off: no delay to mark
	}
	lo, hi := p.Buckets[0].Low, p.Max()
	if cur > 0 { // the delay has a bucket, even outside the data
		lo, hi = min(lo, cur), max(hi, cur)
	}
	edges := histogramEdges(lo, hi)
	bins := make([]bin, len(edges)-1)
	for i := range bins {
		bins[i] = bin{lo: edges[i], hi: edges[i+1]}
	}
	for _, b := range p.Buckets {
		for i := range bins {
			if b.Low < bins[i].hi || i == len(bins)-1 {
				bins[i].exact += b.Exact
				bins[i].cens += b.Censored
				break
			}
		}
	}
	dk := -1 // the delay's bucket
	for i, b := range bins {
		if cur > 0 && cur >= b.lo && cur < b.hi {
			dk = i
		}
	}
	count := func(i int) int64 { return bins[i].exact + bins[i].cens }
	for len(bins) > rows { // fold the smallest neighbours until they fit
		k := -1
		for i := 0; i+1 < len(bins); i++ {
			if (i == dk || i+1 == dk) && float64(bins[i+1].hi) > maxDelayBucketSpan*float64(bins[i].lo) {
				continue
			}
			if k < 0 || count(i)+count(i+1) < count(k)+count(k+1) {
				k = i
			}
		}
		if k < 0 {
			break // only folds into the delay's bucket are left
		}
		bins[k] = bin{lo: bins[k].lo, hi: bins[k+1].hi, exact: bins[k].exact + bins[k+1].exact, cens: bins[k].cens + bins[k+1].cens}
		bins = append(bins[:k+1], bins[k+2:]...)
		if dk > k {
			dk--
		}
	}
	var most int64 = 1
	notes := make([]string, len(bins))
	noteW := 0
	for i, b := range bins {
		most = max(most, b.exact)
		notes[i] = pctText(float64(b.exact+b.cens) / float64(p.Samples()))
		if b.cens > 0 {
			notes[i] += fmt.Sprintf(", %d cut short", b.cens)
		}
		if i == dk {
			notes[i] += st.warn.Render(" ◀ delay " + fmtDelay(cur))
		}
		noteW = max(noteW, lipgloss.Width(notes[i]))
	}
	const labelW = 14
	barW := max(width-labelW-noteW-2, 5)
	cv := canvas.New(barW, len(bins))
	for i, b := range bins {
		graph.DrawRowLeftToRight(&cv, canvas.Point{X: 0, Y: i}, float64(b.exact)/float64(most)*float64(barW), st.spark)
	}
	bars := strings.Split(cv.View(), "\n")
	var out []string
	for i, b := range bins {
		label := fmt.Sprintf("%s–%s", strings.TrimSpace(fmtMS(b.lo)), strings.TrimSpace(fmtMS(b.hi)))
		out = append(out, pad(label, labelW-1)+" "+bars[i]+" "+notes[i])
	}
	return out
}

// maxDelayBucketSpan bounds the delay's histogram bucket: its high edge at
// most this many times its low one (300ms–700ms is the widest fold of
// 500ms–700ms, 300ms–1.00s is not).
const maxDelayBucketSpan = 3

// minHistRows is what the histogram keeps of the rows: the delay's bucket
// and its neighbours, the notes under the table giving way first.
const minHistRows = 4

// histogramEdges are round millisecond edges (1, 1.5, 2, 3, 5, 7 × 10^k)
// covering [lo, hi]: the first at or below lo, the last above hi.
func histogramEdges(lo, hi time.Duration) []time.Duration {
	var out []time.Duration
	for e := math.Floor(logMS(lo)); len(out) == 0 || out[len(out)-1] <= hi; e++ {
		for _, f := range []float64{1, 1.5, 2, 3, 5, 7} {
			v := time.Duration(math.Pow(10, e) * f * float64(time.Millisecond))
			switch {
			case v <= lo:
				out = []time.Duration{v}
			case len(out) == 0 || out[len(out)-1] <= hi:
				out = append(out, v)
			}
		}
	}
	return out
}

// tuningTable is the candidate delays with their forecasts; the current
// and the recommended rows are marked in words.
func (m Model) tuningTable(width int) []string {
	t, st := m.tuning, m.styles
	labelW := 18
	for _, r := range t.rows {
		labelW = max(labelW, min(len(r.label()), 30))
	}
	labelW = min(labelW, max(width-58, 12))
	head := fmt.Sprintf("  %6s  %-*s %6s %7s %7s %7s  %-6s", "DELAY", labelW, "CANDIDATE", "FIRE%", "P99", "P99.9", "EXTRA", "BUDGET")
	if legend := "  ★ best = least load, p99 within 5 %"; len(head)+len(legend) <= width {
		head += legend
	}
	out := []string{st.faint.Render(head)}
	best := t.recommended()
	for i, r := range t.rows {
		cur := "  "
		if i == t.cursor {
			cur = st.accent.Render("▸ ")
		}
		var marks []string
		if r.policy.current {
			marks = append(marks, "◀ now")
		}
		if i == best {
			marks = append(marks, "★ best")
		}
		f := r.f
		budget := "within"
		switch {
		case r.policy.off:
			budget = dash // no hedges to budget
		case f.BudgetCapped:
			budget = "capped"
		}
		delay := fmtDelay(f.Delay)
		if r.policy.off {
			delay = "off"
		}
		cells := fmt.Sprintf("%6s  %-*s %6s %7s %7s %7s  %-6s", delay, labelW, fit(r.label(), labelW),
			fmtPct(f.FireRate, f.Samples > 0), openMS(f.P99, f.Open[2], f.Samples), openMS(f.P999, f.Open[3], f.Samples),
			extraText(f), budget)
		line := cur + cells
		if len(marks) > 0 {
			mark := strings.Join(marks, " · ")
			if room := width - lipgloss.Width(line) - 2; lipgloss.Width(mark) > room {
				// At 80 columns "◀ now · ★ best" was cut to "◀ now · …",
				// losing the recommendation: the glyphs alone.
				mark = strings.NewReplacer(" · ", " ", "◀ now", "◀", "★ best", "★").Replace(mark)
			}
			line += "  " + st.accent.Render(mark)
		}
		if i == t.cursor {
			line = st.selected.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// openMS is a predicted latency, "≥" when the data end before it.
func openMS(d time.Duration, open bool, samples int64) string {
	if samples == 0 || d <= 0 {
		return pad(dash, 7)
	}
	s := strings.TrimSpace(fmtMS(d))
	if open {
		s = "≥" + s
	}
	return pad(s, 7)
}

func extraText(f engine.HedgeForecast) string {
	if f.Samples == 0 {
		return pad(dash, 7)
	}
	return pad("+"+pctText(f.ExtraLoad), 7)
}

// tuningFoot is what the highlighted row costs, how the last change is
// doing, and the model's caveats: one item each, wrapped whole to width,
// in the order they give way (the last first) when rows are short.
func (m Model) tuningFoot(width int) [][]string {
	t, st := m.tuning, m.styles
	var out [][]string
	if len(t.rows) > 0 {
		r := t.rows[t.cursor]
		if r.f.BudgetCapped {
			wanted := t.dist.Primary.SurvivalAt(r.f.Delay)
			out = append(out, wrapLines(st.warn.Render(fmt.Sprintf("budget: at %s about %s of requests would want a hedge; hedge.budget %g lets %s fire, and the figures count the ones it refuses",
				fmtDelay(r.f.Delay), pctText(wanted), t.dist.Hedge.Budget, pctText(r.f.FireRate))), width))
		}
	}
	if tr := t.dist.Trial; tr != nil {
		out = append(out, wrapLines(m.trialLine(*tr), width))
	}
	if why := m.modelOptimistic(); why != "" {
		out = append(out, wrapLines(st.warn.Render("⚠ the endpoints are not independent: the model is optimistic ("+why+")"), width))
	}
	for _, n := range t.notes {
		// The engine's lower-bound note counts p50 and p95, which the
		// table does not show: it is said of the table's own ≥ instead.
		if !strings.Contains(n, "not independent") && n != engine.NoteLowerBounds {
			out = append(out, wrapLines(st.faint.Render(n), width))
		}
	}
	if which := t.lowerBounds(); which != "" {
		out = append(out, wrapLines(st.faint.Render("≥ marks a lower bound ("+which+"): "+lowerBoundWhy), width))
	}
	return out
}

// lowerBounds names the table's columns with a "≥" figure ("p99.9",
// "p99, p99.9"), "" when none has.
func (t tuningView) lowerBounds() string {
	var open [2]bool
	for _, r := range t.rows {
		for i, q := range []int{2, 3} {
			if r.f.Open[q] && r.f.Samples > 0 && []time.Duration{r.f.P99, r.f.P999}[i] > 0 {
				open[i] = true
			}
		}
	}
	switch open {
	case [2]bool{true, true}:
		return "p99, p99.9"
	case [2]bool{true, false}:
		return "p99"
	case [2]bool{false, true}:
		return "p99.9"
	}
	return ""
}

// clipFoot flattens the foot's items into at most n lines: when they do not
// fit, a cut item's last line ends in "…" and the last line says how many
// more there are.
func (m Model) clipFoot(items [][]string, width, n int) []string {
	var all []string
	for _, it := range items {
		all = append(all, it...)
	}
	if len(all) <= n || n < 1 {
		return all[:min(len(all), max(n, 0))]
	}
	var out []string
	for _, it := range items {
		for i, l := range it {
			if len(out) == n-1 {
				if i > 0 { // the item shown so far goes on
					last := out[len(out)-1]
					keep := min(lipgloss.Width(strings.TrimRight(ansi.Strip(last), " ")), width-2)
					out[len(out)-1] = fit(ansi.Truncate(last, keep, "")+" …", width)
				}
				more := len(all) - len(out)
				return append(out, m.styles.faint.Render(fit(fmt.Sprintf("… %s (a taller terminal shows them)", engine.Count(more, "more line")), width)))
			}
			out = append(out, l)
		}
	}
	return out
}

// trialLine is the prediction at the last change beside the measurement
// since.
func (m Model) trialLine(tr engine.HedgeTrial) string {
	st := m.styles
	what := fmtDelay(tr.Delay) + " " + tr.DelaySource
	if !tr.Enabled {
		what = "hedging off"
	}
	s := fmt.Sprintf("since the change %s ago (%s): ", fmtAge(m.engineNow().Sub(tr.Since)), what)
	switch {
	case tr.Predicted <= 0:
		s += "no prediction (nothing to forecast from then)"
	case tr.PredictedLowerBound:
		s += "predicted p99 " + boundText(tr.Predicted, true) + " (a lower bound)"
	case tr.PredictedHigh > 0:
		s += fmt.Sprintf("predicted p99 %s [%s–%s]", msText(tr.Predicted), msText(tr.PredictedLow), msText(tr.PredictedHigh))
	default:
		s += "predicted p99 " + msText(tr.Predicted)
	}
	switch {
	case tr.Samples == 0:
		return s + ", measured: no requests yet"
	case tr.MeasuredHigh == 0:
		return s + fmt.Sprintf(", measured %s over %d requests (too few to judge yet)", msText(tr.Measured), tr.Samples)
	}
	s += fmt.Sprintf(", measured %s [%s–%s] over %d requests", msText(tr.Measured), msText(tr.MeasuredLow), msText(tr.MeasuredHigh), tr.Samples)
	switch {
	case tr.Unhedged():
		// The prediction assumed hedges the budget then did not send: the
		// model is not what was measured, whichever way it went.
		return s + st.warn.Render(fmt.Sprintf(": not hedged as predicted: %d hedges due were not sent, the hedge budget spent (every method draws on it), %d sent", tr.BudgetRefused, tr.HedgesFired))
	case tr.Slower():
		return s + st.warn.Render(": departs from the prediction")
	case tr.Departs:
		return s + st.warn.Render(": departs from the prediction, faster: the distribution it rests on has changed since")
	}
	return s + st.ok.Render(": the model holds")
}

// modelOptimistic says why the model cannot be trusted here, "" if
// nothing says so: shared-fate warnings in the pool, or a measurement
// since the last change slower than its prediction.
func (m Model) modelOptimistic() string {
	var why []string
	if len(m.sharedFate()) > 0 {
		why = append(why, "shared-fate warnings in the pool")
	}
	for _, w := range m.snap.Warnings {
		if w.Reason == "pool" && len(w.Endpoints) > 1 {
			why = append(why, "a single failure domain")
		}
	}
	if tr := m.tuning.dist.Trial; tr != nil && tr.Slower() {
		why = append(why, "the measured p99 departs from the prediction beyond its confidence")
	}
	return strings.Join(why, "; ")
}

// wrapLines wraps s (styled) to width.
func wrapLines(s string, width int) []string {
	w := strings.Split(wrap(s, width), "\n")
	out := make([]string, 0, len(w))
	for _, l := range w {
		out = append(out, fit(strings.TrimRight(l, " "), width))
	}
	return out
}
