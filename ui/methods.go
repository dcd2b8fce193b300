package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// methodRow is one row of the methods table; the first row (name "")
// stands for all methods: what + - a = do there applies to every method.
type methodRow struct {
	name string
	st   engine.MethodStatus
}

func (m Model) methodColumns(width int) []column[methodRow] {
	nameW := 16
	for name := range m.snap.Methods {
		nameW = max(nameW, len(name))
	}
	nameW = min(nameW, 26)
	cols := []column[methodRow]{
		{title: " ", width: 1, cell: func(r methodRow) string {
			if r.name == m.selectedMethod() {
				return m.cursor(focusMethods)
			}
			return " "
		}},
		{title: "METHOD", width: nameW, cell: func(r methodRow) string {
			if r.name == "" {
				return m.styles.accent.Render("(all methods)")
			}
			return fitName(r.name, nameW)
		}},
		{title: "CLASS", width: 8, drop: 2, cell: func(r methodRow) string {
			if r.name == "" {
				return ""
			}
			return r.st.Class.String()
		}},
		{title: "REQ/S", width: 6, right: true, cell: func(r methodRow) string {
			if !m.haveSnap {
				return dash // not known yet: no Snapshot says the pool is idle
			}
			return fmtRate(r.st.Client.PerSecond)
		}},
		{title: "P50", width: 6, right: true, drop: 4, cell: func(r methodRow) string { return fmtMS(r.st.Client.P50) }},
		{title: "P95", width: 6, right: true, cell: func(r methodRow) string { return fmtMS(r.st.Client.P95) }},
		{title: "P99", width: 6, right: true, cell: func(r methodRow) string { return fmtMS(r.st.Client.P99) }},
		{title: "ERR%", width: 5, right: true, drop: 5, cell: func(r methodRow) string { return m.clientErrCell(r.st.Client) }},
		{title: "DELAY", width: 6, right: true, cell: func(r methodRow) string { return m.delayCell(r) }},
		{title: "SOURCE", width: 6, cell: func(r methodRow) string { return m.sourceCell(r) }},
		{title: "FIRE%", width: 5, right: true, drop: 3, cell: func(r methodRow) string {
			return fmtPct(r.st.Client.FireRate, r.st.Client.Requests > 0 && (r.name == "" || r.st.Hedge != nil))
		}},
		{title: "WIN%", width: 5, right: true, drop: 1, cell: func(r methodRow) string {
			return fmtPct(r.st.Client.WinRate, r.st.Client.HedgesFired > 0)
		}},
	}
	return fitColumns(cols, width)
}

// clientErrCell is the share of the method's requests over the last
// minute that got rpcdash's own error, in the error colour when any did:
// the header's count said an outage, not which methods it hit.
func (m Model) clientErrCell(c engine.ClientStats) string {
	if c.Requests == 0 {
		return fmtPct(0, false)
	}
	s := fmtPct(float64(c.Errors)/float64(c.Requests), true)
	if c.Errors > 0 {
		return m.styles.err.Render(s)
	}
	return s
}

func (m Model) delayCell(r methodRow) string {
	if r.name == "" {
		switch {
		case !m.haveSnap:
			return dash // not known yet: no Snapshot says hedging is off
		case !m.snap.Hedge.Enabled:
			return m.styles.warn.Render("off")
		}
		return fmtDelay(m.snap.Hedge.Delay)
	}
	h := r.st.Hedge
	switch {
	case h == nil:
		return m.styles.faint.Render("never")
	case !h.Enabled:
		return m.styles.warn.Render("off")
	}
	return fmtDelay(h.Delay)
}

func (m Model) sourceCell(r methodRow) string {
	// Paused, no hedge goes out at the delays shown (the header's PAUSED
	// stood beside delays and sources that read as running).
	if r.name == "" {
		switch {
		case !m.snap.Hedge.Enabled:
			return "" // "off" has no source ("off p95" read as a delay)
		case m.snap.Hedge.Paused:
			return m.styles.warn.Render("paused")
		case m.snap.Hedge.Delay == engine.AutoDelay:
			return quantileLabel(m.snap.Hedge.Quantile)
		}
		return m.snap.Hedge.DelaySource
	}
	if r.st.Hedge == nil || !r.st.Hedge.Enabled {
		return ""
	}
	if m.snap.Hedge.Paused {
		return m.styles.warn.Render("paused")
	}
	// An auto delay at a quantile of the method's own reads as the pool
	// row's does: `auto` beside a p90 set for the method alone read as the
	// header's p95.
	if h := r.st.Hedge; h.DelaySource == "auto" && h.Quantile > 0 && h.Quantile != m.snap.Hedge.Quantile {
		return quantileLabel(h.Quantile)
	}
	return r.st.Hedge.DelaySource
}

// methodsTitle is the methods panel's title, with the delay upstream
// batches hedge at once it is learnt (hedge.batch_delay_ms): a batch of
// many methods waits one delay, the quantile of batches' own round trips,
// not any method's in the table.
func (m Model) methodsTitle(inner int) string {
	h := m.snap.Hedge
	if !m.haveSnap {
		return "Methods"
	}
	// The rates, latencies and hedge shares are the clients' last minute;
	// the endpoints' figures above reach back server.stats_window.
	if h.Enabled && h.Paused && h.PauseReason != "" {
		return ansi.Truncate("Methods · last 1m · hedging paused: "+h.PauseReason, max(inner-titleMargin, 0), "…")
	}
	titles := []string{"Methods · last 1m"}
	if h.Enabled && h.Delay == engine.AutoDelay && h.BatchDelay > 0 {
		batches := fmt.Sprintf("batches hedge at %s (%s of %d round trips)",
			strings.TrimSpace(fmtDelay(h.BatchDelay)), quantileLabel(h.Quantile), h.BatchRoundTrips)
		titles = []string{"Methods · last 1m · " + batches, "Methods · " + batches, "Methods · last 1m"}
	}
	return firstFitting(titles, inner, "Methods")
}

// titleMargin is what a panel's top edge keeps beside its title: its
// corners, a rule of 4 and the spaces around the title.
const titleMargin = 8

// firstFitting is the first of titles that fits on a panel's top edge
// inner cells wide (its corners, a rule of 4 and the spaces around it
// kept), else fallback.
func firstFitting(titles []string, inner int, fallback string) string {
	for _, t := range titles {
		if lipgloss.Width(t)+titleMargin <= inner {
			return t
		}
	}
	return fallback
}

// methodRows is the "all methods" row, then every method by name.
func (m Model) methodRows() []methodRow {
	all := methodRow{st: engine.MethodStatus{AccountSnapshot: m.snap.Totals, Client: m.snap.Client}}
	rows := []methodRow{all}
	for _, name := range m.methodNames() {
		rows = append(rows, methodRow{name: name, st: m.snap.Methods[name]})
	}
	return rows
}

func (m Model) viewMethods(width, rows int) string {
	cols := m.methodColumns(width)
	lines := []string{tableHead(cols, m.styles, m.marksFocus(focusMethods))}
	all := m.methodRows()
	start, shown, cut := tableWindow(len(all), m.mCursor, rows-1)
	for _, r := range all[start : start+shown] {
		lines = append(lines, renderRow(cols, r))
	}
	if cut {
		lines = append(lines, m.outOfSight(start, len(all)-start-shown, "", width))
	}
	return strings.Join(lines, "\n")
}
