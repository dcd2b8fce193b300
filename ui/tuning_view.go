package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// The tuning view's drawing: a title, the distribution (an HdrHistogram
// percentile plot, or a log-bucket histogram when the terminal is small),
// the table of candidate delays, and what happened since the last change.

// minPlotRows is the smallest plot (graph rows) worth drawing; below it
// (an 80×24 terminal) the view shows the histogram.
const minPlotRows = 8

// tuningBody draws the view in exactly width×rows: the table whole, the
// percentile plot when the notes under it leave it minPlotRows, else the
// histogram, which keeps minHistRows before the notes (cut saying so).
func (m Model) tuningBody(width, rows int) string {
	t, st := m.tuning, m.styles
	lines := []string{m.tuningTitle(width)}
	if !t.have {
		msg := "reading the distribution of " + t.method + "…"
		if t.err != nil {
			msg = st.err.Render("✗ " + t.err.Error())
		}
		lines = append(lines, "", msg)
		return strings.Join(fitLines(lines, width, rows), "\n")
	}
	if t.err != nil {
		lines = append(lines, fit(st.err.Render("✗ refresh failed, showing the last answer: "+t.err.Error()), width))
	}
	table := m.tuningTable(width)
	foot := m.tuningFoot(width)
	footRows := 0
	for _, it := range foot {
		footRows += len(it)
	}
	avail := rows - len(lines) - len(table) // the chart, a blank line, the foot
	if left := avail - footRows - 1; left-3 >= minPlotRows {
		lines = append(lines, m.percentilePlot(width, left)...)
		lines = append(lines, "")
		lines = append(lines, table...)
		lines = append(lines, m.clipFoot(foot, width, footRows)...)
		return strings.Join(fitLines(lines, width, rows), "\n")
	}
	blank := 1
	hist := avail - footRows - blank
	if hist < minHistRows {
		blank, hist = 0, avail-footRows
	}
	if hist < minHistRows {
		// The notes give way (one line saying so stays) before the
		// histogram does.
		hist = max(min(minHistRows, avail-1), 3)
	}
	chart := m.histogram(width, hist)
	lines = append(lines, chart...)
	if blank > 0 {
		lines = append(lines, "")
	}
	lines = append(lines, table...)
	lines = append(lines, m.clipFoot(foot, width, avail-len(chart)-blank)...)
	return strings.Join(fitLines(lines, width, rows), "\n")
}

// fitLines makes lines exactly width wide and rows long.
func fitLines(lines []string, width, rows int) []string {
	if len(lines) > rows {
		lines = lines[:rows]
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	for i := range lines {
		lines[i] = fit(lines[i], width)
	}
	return lines
}

// tuningTitle is the method, its delay and where the delay comes from,
// and what the distribution holds (primaries, the window, how many were
// cut short by winning hedges, how many were left untimed), in the
// longest form that fits: at 80
// columns the long one was cut at "5000 primaries over 5m…", the
// censored count gone. The narrower forms say the same figures in fewer
// words; only a method name too long for the narrowest is cut.
func (m Model) tuningTitle(width int) string {
	t, st := m.tuning, m.styles
	if !t.have {
		return fit(st.title.Render("Hedge tuning · "+t.method), width)
	}
	h, p := t.dist.Hedge, t.dist.Primary
	delay := func(short bool) string {
		switch {
		case !h.Enabled && short:
			return st.warn.Render("hedging OFF") + " (" + fmtDelay(h.Delay) + ")"
		case !h.Enabled:
			return st.warn.Render("hedging OFF") + fmt.Sprintf(" (delay %s)", fmtDelay(h.Delay))
		case short:
			return fmtDelay(h.Delay) + " " + sourceText(h)
		}
		return "delay " + fmtDelay(h.Delay) + " " + sourceText(h)
	}
	n, span, cut := p.Samples(), fmtSpan(t.dist.Window), p.Censored
	form := func(name, method, delay, counts string) string {
		if name != "" {
			method = name + " · " + method
		}
		return st.title.Render(method) + "  " + delay + " · " + counts
	}
	// Primaries rpcdash's own stall timed are counted, not in the
	// distribution (engine.MethodDistribution.Untimed): said when there
	// are any, so that the count is every primary.
	untimed, untimedShort := "", ""
	if u := t.dist.Untimed; u > 0 {
		untimed, untimedShort = fmt.Sprintf(", %d untimed (rpcdash stalled)", u), fmt.Sprintf(", %d untimed", u)
	}
	inSpan := fmt.Sprintf("%d primaries in %s, %d cut short%s", n, span, cut, untimedShort)
	forms := []string{
		form("Hedge tuning", t.method, delay(false), fmt.Sprintf("%d primaries over %s, %d cut short by winning hedges (censored)%s", n, span, cut, untimed)),
		form("Hedge tuning", t.method, delay(false), fmt.Sprintf("%d primaries over %s, %d cut short (censored)%s", n, span, cut, untimedShort)),
		form("Hedge tuning", t.method, delay(false), inSpan),
		form("Tuning", t.method, delay(false), inSpan),
		form("Tuning", t.method, delay(true), inSpan),
	}
	for _, f := range forms {
		if lipgloss.Width(f) <= width {
			return fit(f, width)
		}
	}
	tiny := fmt.Sprintf("%d in %s, %d cut short%s", n, span, cut, untimedShort)
	narrowest := func(method string) string { return form("", method, delay(true), tiny) }
	forms = []string{form("Tuning", t.method, delay(true), tiny), narrowest(t.method)}
	for _, f := range forms {
		if lipgloss.Width(f) <= width {
			return fit(f, width)
		}
	}
	// The figures before the name's end.
	room := width - lipgloss.Width(narrowest(""))
	return fit(narrowest(ansi.Truncate(t.method, max(room, 1), "…")), width)
}

func sourceText(h engine.MethodHedgeSettings) string {
	if h.Source == "auto" || h.Source == "cold" {
		return fmt.Sprintf("(%s %s)", h.Source, quantileLabel(h.Quantile))
	}
	return "(" + h.Source + ")"
}

// The percentile plot: x is log10(1/(1−q)), so p50, p90, p99 and p99.9
// are evenly spaced as in HdrHistogram's plots; y is milliseconds on a log
// scale. The delay in force is a horizontal line: the share of primaries
// above it (where it crosses the curve) outlast it. Not all of them fire
// a hedge: hedges go out a little after it (the hedge lag) and the budget
// may hold some back, so the share that fires is the table's FIRE%.
const plotMaxX = 3 // p99.9

var plotTicks = []struct {
	x     float64
	label string
}{{math.Log10(2), "p50"}, {1, "p90"}, {2, "p99"}, {3, "p99.9"}}

// percentilePlot draws the plot in width×rows: a legend line, the graph,
// the x axis and its labels.
func (m Model) percentilePlot(width, rows int) []string {
	t, st := m.tuning, m.styles
	p := t.dist.Primary
	const yLabelW = 7
	gw, gh := width-yLabelW-1, rows-3
	cur, on := t.dist.Hedge.Delay, t.dist.Hedge.Enabled
	sel, drawSel := cur, false
	if len(t.rows) > 0 && !t.rows[t.cursor].policy.off { // hedging off has no delay to draw
		sel = t.rows[t.cursor].f.Delay
		drawSel = sel != cur || !on
	}
	legend := st.faint.Render("ms (log) by percentile  ") + st.warn.Render("━━") +
		fmt.Sprintf(" delay %s: %s of primaries outlast it", fmtDelay(cur), pctText(p.SurvivalAt(cur)))
	if !on {
		// Its delay waits for hedging to be back on: drawn, it read as
		// one its hedges still went out at.
		legend = st.faint.Render("ms (log) by percentile  ") + st.warn.Render("hedging off for "+t.method+": no hedge goes out")
	}
	if drawSel {
		legend += "  " + st.accent.Render("┄┄") + fmt.Sprintf(" highlighted %s: %s", fmtDelay(sel), pctText(p.SurvivalAt(sel)))
	}
	out := []string{legend}
	if p.Samples() == 0 || len(p.Survival) == 0 || gw < 10 {
		return append(out, st.faint.Render("no answered primaries in the window yet"))
	}
	// The curve, sampled at every braille column.
	cols := 2 * gw
	xs, ys := make([]float64, 0, cols), make([]float64, 0, cols)
	for c := range cols {
		x := plotMaxX * float64(c) / float64(cols-1)
		v, ok := p.Quantile(1 - math.Pow(10, -x))
		if !ok {
			break
		}
		xs, ys = append(xs, x), append(ys, logMS(v))
	}
	lo, hi := ys[0], ys[len(ys)-1]
	for _, d := range []struct {
		v    time.Duration
		draw bool
	}{{cur, on}, {sel, drawSel}} {
		if d.draw {
			lo, hi = math.Min(lo, logMS(d.v)), math.Max(hi, logMS(d.v))
		}
	}
	lo, hi = lo-0.05, hi+0.05
	// ntcharts rasterises the curve into braille dots; the rows are styled
	// here a run at a time (a frame redraws them: a style per cell, as a
	// canvas renders, costs several times more).
	grid := graph.NewBrailleGrid(gw, gh, 0, plotMaxX, lo, hi)
	for i := 1; i < len(xs); i++ {
		a := grid.GridPoint(canvas.Float64Point{X: xs[i-1], Y: ys[i-1]})
		b := grid.GridPoint(canvas.Float64Point{X: xs[i], Y: ys[i]})
		for _, pt := range graph.GetLinePoints(a, b) {
			grid.Set(pt)
		}
	}
	cells := grid.BraillePatterns()
	row := func(v float64) int { return gh - 1 - int(math.Round((v-lo)/(hi-lo)*float64(gh-1))) }
	lineRune := map[int]rune{}
	lineStyle := map[int]lipgloss.Style{}
	if drawSel {
		lineRune[row(logMS(sel))], lineStyle[row(logMS(sel))] = '┄', st.accent
	}
	if on {
		lineRune[row(logMS(cur))], lineStyle[row(logMS(cur))] = '━', st.warn
	}
	// Y labels at round milliseconds, one per row at most.
	labels := make([]string, gh)
	for _, v := range yTicks(lo, hi) {
		if r := row(v); r >= 0 && r < gh && labels[r] == "" {
			labels[r] = fmtMS(time.Duration(math.Pow(10, v) * float64(time.Millisecond)))
		}
	}
	for y := range gh {
		var b strings.Builder
		b.WriteString(st.faint.Render(pad(labels[y], yLabelW-1) + " ┤"))
		run, curve := []rune{}, false
		flush := func() {
			switch {
			case len(run) == 0:
			case curve:
				b.WriteString(st.spark.Render(string(run)))
			case lineRune[y] != 0:
				b.WriteString(lineStyle[y].Render(string(run)))
			default:
				b.WriteString(string(run))
			}
			run = run[:0]
		}
		for x := range gw {
			r, isCurve := cells[y][x], cells[y][x] != runes.BrailleBlockOffset
			if !isCurve {
				r = ' '
				if lr := lineRune[y]; lr != 0 {
					r = lr
				}
			}
			if isCurve != curve {
				flush()
				curve = isCurve
			}
			run = append(run, r)
		}
		flush()
		out = append(out, b.String())
	}
	// The x axis, labelled at the percentiles.
	axis := []rune(strings.Repeat("─", gw))
	under := []rune(strings.Repeat(" ", gw+8))
	for _, tk := range plotTicks {
		c := int(math.Round(tk.x / plotMaxX * float64(gw-1)))
		axis[c] = '┬'
		start := min(max(c-len(tk.label)/2, 0), gw-len(tk.label))
		copy(under[start:], []rune(tk.label))
	}
	out = append(out, st.faint.Render(strings.Repeat(" ", yLabelW-1)+" └"+string(axis)))
	out = append(out, st.faint.Render(strings.Repeat(" ", yLabelW+1)+strings.TrimRight(string(under), " ")))
	return out
}

func logMS(d time.Duration) float64 {
	return math.Log10(math.Max(float64(d)/float64(time.Millisecond), 0.001))
}

// yTicks are the log10 of the 1-2-5 millisecond values between lo and hi,
// or of finer round values when those are fewer than three.
func yTicks(lo, hi float64) []float64 {
	for _, steps := range [][]float64{{1, 2, 5}, {1, 1.5, 2, 3, 4, 5, 7}} {
		var out []float64
		for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
			for _, f := range steps {
				if v := e + math.Log10(f); v >= lo && v <= hi {
					out = append(out, v)
				}
			}
		}
		if len(out) >= 3 || len(steps) > 3 {
			return out
		}
	}
	return nil
}
