package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/rpcdash/rpcdash/engine"
)

// View draws the model; it never waits and never changes anything.
func (m Model) View() string {
	if m.quitting || m.width == 0 || m.height == 0 {
		return ""
	}
	// One instant for the whole frame: the header's STALE and the drain
	// question's ages, read a moment apart, disagreed across a second.
	now := m.opts.Now()
	m.opts.Now = func() time.Time { return now }
	if m.width < minWidth || m.height < minHeight {
		msg := fmt.Sprintf("rpcdash needs %d×%d, have %d×%d: enlarge the terminal (keys are off until then; q quits)", minWidth, minHeight, m.width, m.height)
		return lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, wrap(msg, m.width))
	}
	l := m.layout()
	top := append(m.headerLines(), m.bannerLines()...)
	bottom := m.bottomLines()
	bodyRows := m.height - len(top) - len(bottom)
	var body string
	switch {
	case m.overlay == overlayTuning:
		body = m.tuningBody(m.width, bodyRows)
	case m.overlay != overlayNone:
		body = m.overlayView(l, bodyRows)
	default:
		body = m.panels(l, bodyRows)
	}
	lines := append(top, strings.Split(body, "\n")...)
	lines = append(lines, bottom...)
	// Never taller or wider than the terminal, whatever a panel did.
	if len(lines) > m.height {
		lines = append(lines[:m.height-len(bottom)], bottom...)
	}
	for i, s := range lines {
		if lipgloss.Width(s) > m.width {
			lines[i] = ansi.Truncate(s, m.width, "")
		}
	}
	return strings.Join(lines, "\n")
}

// panels lays out endpoints, methods (and detail, when wide) and events in
// exactly rows lines.
func (m Model) panels(l layout, rows int) string {
	frame := 0
	if l.borders {
		frame = 2
	}
	epRows, mRows, evRows := m.panelRows(l, rows)
	eps := m.panel(l, focusEndpoints, m.endpointsTitle(m.width-frame), m.viewEndpoints(l, epRows), m.width, epRows)
	var middle string
	if l.inlineDetail {
		mw, dw := m.middleWidths()
		meth := m.panel(l, focusMethods, m.methodsTitle(mw-frame), m.viewMethods(mw-frame, mRows), mw, mRows)
		det := m.panel(l, -1, "Detail", m.detailPane(dw-frame, mRows), dw, mRows)
		middle = lipgloss.JoinHorizontal(lipgloss.Top, meth, det)
	} else {
		middle = m.panel(l, focusMethods, m.methodsTitle(m.width-frame), m.viewMethods(m.width-frame, mRows), m.width, mRows)
	}
	evs := m.panel(l, focusEvents, "Events", m.viewEvents(m.width-frame, evRows), m.width, evRows)
	// Every panel is exactly m.width wide: no need to measure and pad them.
	return eps + "\n" + middle + "\n" + evs
}

// panelRows are the rows inside each panel when the body has rows lines.
// They depend on the terminal and the pool's size only, never on what the
// panels hold now: nothing moves between ticks.
func (m Model) panelRows(l layout, rows int) (epRows, mRows, evRows int) {
	frame := 0
	if l.borders {
		frame = 2
	}
	nEp := max(1, len(m.snap.Endpoints))
	epRows = min(1+nEp, max(4, rows/2)-frame)
	rest := rows - epRows - frame
	mRows = min(2+len(m.snap.Methods), max(3, rest/2)-frame)
	if l.inlineDetail {
		// The detail beside the methods takes half of what is left.
		mRows = max(mRows, rest/2-frame)
	}
	evRows = rest - mRows - 2*frame
	if evRows < 2 {
		mRows -= 2 - evRows
		evRows = 2
	}
	return epRows, mRows, evRows
}

// middleWidths are the methods' and the detail's widths side by side.
func (m Model) middleWidths() (methods, detail int) {
	mw := min(96, m.width*3/5)
	return mw, m.width - mw
}

// bodyRows are the lines between the header (and banners) and the status
// and help lines.
func (m Model) bodyRows() int {
	return m.height - len(m.headerLines()) - len(m.bannerLines()) - len(m.bottomLines())
}

// panel frames content in width×rows (plus its border when there are
// borders); the focused panel's border and title are highlighted.
func (m Model) panel(l layout, f focus, title, content string, width, rows int) string {
	inner := width
	if l.borders {
		inner = width - 2
	}
	lines := strings.Split(content, "\n")
	if len(lines) > rows {
		lines = lines[:rows]
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	for i := range lines {
		lines[i] = fit(lines[i], inner)
	}
	if !l.borders {
		return strings.Join(lines, "\n")
	}
	// The frame is drawn here rather than by a bordered Lip Gloss style:
	// the lines already have their width, and re-measuring and re-wrapping
	// the whole panel was most of a frame's cost.
	bc := m.styles.border
	if f == m.focus {
		bc = m.styles.borderFocus
		title = "▶ " + title
	}
	edge := lipgloss.NewStyle().Foreground(bc)
	t := " " + title + " "
	fill := max(0, inner-1-lipgloss.Width(t))
	var b strings.Builder
	b.WriteString(edge.Render("╭─") + m.styles.title.Render(t) + edge.Render(strings.Repeat("─", fill)+"╮"))
	side := edge.Render("│")
	for _, line := range lines {
		b.WriteString("\n" + side + line + side)
	}
	b.WriteString("\n" + edge.Render("╰"+strings.Repeat("─", inner)+"╯"))
	return b.String()
}

// statusMaxLines is the most lines the status line takes: its own, the
// help bar's, and past those one of the body's.
const statusMaxLines = 3

// bottomLines are the status line and the help bar under the panels. A
// status too long for its line takes the help bar's while it shows, so
// that the panels keep their rows; only a third line (a restart's note at
// 80 columns) is the body's.
func (m Model) bottomLines() []string {
	lines := strings.Split(m.statusLineView(), "\n")
	if len(lines) == 1 {
		lines = append(lines, m.helpBar())
	}
	return lines
}

// statusLineView is the last action's result, or what to do next: a
// result longer than the terminal is wide wraps onto the lines below (cut
// at 80 columns, "⚠ the question (drain flaky) closed, nothing sent: the
// attached instance restar…" lost what the restart undid), and only past
// statusMaxLines is cut.
func (m Model) statusLineView() string {
	s := m.status
	if !s.shown(m.opts.Now()) {
		s = statusLine{}
	}
	text := s.text
	if text == "" && m.overlay == overlayTuning {
		// The panels' hint (tab, ? …) named keys this view does not take.
		text = "tuning view: " + m.tuningKeys()
	}
	if text == "" {
		// Say what the keys act on.
		method := m.selectedMethod()
		if method == "" {
			method = "all methods"
		}
		ep := "—"
		if e, ok := m.selected(); ok {
			ep = e.Name
		}
		// A long name keeps its end and leaves the method in sight: cut
		// at the line's end, two endpoints of one prefix read the same
		// and the method was not said at all.
		lead, mid := "endpoint keys act on ", ", delay keys on "+method
		if room := m.width - lipgloss.Width(lead+mid) - 2; lipgloss.Width(ep) > room {
			ep = fitName(ep, max(room, 16))
		}
		text = lead + ep + mid
		if m.frozen {
			text = "frozen, p resumes · " + text
		}
		// The hint in whole words, as much as fits: at 80 columns it was
		// cut to "(tab, ↑/↓ to choose; ? f…" (the help bar keeps "? help").
		for _, hint := range []string{" (tab, ↑/↓ to choose; ? for all keys)", " (tab, ↑/↓ to choose)", ""} {
			if lipgloss.Width(text+hint) <= m.width || hint == "" {
				text += hint
				break
			}
		}
	}
	st := m.styles.text
	if s.err {
		st = m.styles.err
	}
	lines := strings.Split(wrap(text, m.width), "\n")
	if len(lines) > statusMaxLines {
		lines = lines[:statusMaxLines]
		lines[statusMaxLines-1] = strings.TrimRight(lines[statusMaxLines-1], " ") + "…"
	}
	for i, l := range lines {
		lines[i] = fit(st.Render(strings.TrimRight(l, " ")), m.width)
	}
	return strings.Join(lines, "\n")
}

// helpBar offers the keys, as many as fit: the last one or two (? help and
// q quit; the tuning view's esc/q leave) are kept and those before them
// go. Cut at its end, the bar lost them at every width under 200 columns,
// and at 80 the status line's "? for all keys" went too.
func (m Model) helpBar() string {
	h := m.help
	h.Width = 0 // the bar is fitted here, whole items only
	keys, kept := m.keys.ShortHelp(), 2
	if m.overlay == overlayTuning {
		keys, kept = m.keys.TuningHelp(), 1
	}
	lead := ""
	if m.opts.ReadOnly {
		lead = m.styles.warn.Render("READ-ONLY ")
	}
	body, tail := keys[:len(keys)-kept], keys[len(keys)-kept:]
	sep := h.Styles.ShortSeparator.Inline(true).Render(h.ShortSeparator)
	for n := len(body); ; n-- {
		var parts []string
		if v := h.ShortHelpView(body[:n]); v != "" {
			parts = append(parts, v)
		}
		if slices.ContainsFunc(body[n:], key.Binding.Enabled) {
			parts = append(parts, h.Styles.Ellipsis.Inline(true).Render(h.Ellipsis))
		}
		bar := lead + strings.Join(append(parts, h.ShortHelpView(tail)), sep)
		if n == 0 || lipgloss.Width(bar) <= m.width {
			return fit(bar, m.width)
		}
	}
}

// overlayView draws the open overlay in the body's place, never taller
// than rows: what does not fit is cut inside the box, saying so, and the
// line that says how to close it stays.
func (m Model) overlayView(l layout, rows int) string {
	var content, hint string
	w := m.overlayWidth()
	switch m.overlay {
	case overlayHelp:
		content = m.styles.title.Render("Keys") + m.styles.faint.Render("  · esc or ? closes")
		if m.opts.ReadOnly {
			content += "\n" + wrap(m.styles.warn.Render("--readonly: d f c r h + - a = D are disabled (and enter and a in the tuning view); this console only watches."), w-4) + "\n"
		}
		content += "\n" + m.keyGrid(m.keys.FullHelp(), w-4)
		if !m.opts.ReadOnly {
			content += "\n\n" + wrap(`+ - a = on the "(all methods)" row act on every method (clearing live per-method delays); t on a method row opens its hedge tuning view.`, w-4)
		}
	case overlayConfirm:
		content = m.styles.warn.Render("Confirm") + "\n\n" + wrap(m.confirmQuestion(), w-4)
		hint = m.styles.accent.Render("y") + " yes   " + m.styles.accent.Render("n") + " / esc / anything else: no (the default)"
	case overlayFault:
		content = m.faultMenuView(w - 4)
	case overlayRole:
		content = m.roleMenuView(w - 4)
	case overlayInput:
		content = m.input.View()
		hint = m.styles.faint.Render("enter applies, esc cancels")
	case overlayDetail:
		var lines []string
		lines, _, hint = m.detailWindow()
		content = strings.Join(lines, "\n")
	case overlayDrill:
		content = m.drillView(w - 4)
	}
	room := rows - 2 // the box's edges
	if hint != "" {
		room -= 2
	}
	content = m.clipLines(content, room)
	if hint != "" {
		content += "\n\n" + hint
	}
	box := m.styles.overlay.Width(w).Render(content)
	return overlayOnto(m.panels(l, rows), box, m.width, rows)
}

// detailWindow is what the detail box shows of the detail: every line, or
// when they do not fit, as many as fit from top (clamped), the hint saying
// what more there is above and below and how to scroll to it.
func (m Model) detailWindow() (lines []string, top int, hint string) {
	all := m.detailLines(m.overlayWidth() - 4)
	room := m.bodyRows() - 4 // the box's edges, the hint and the blank before it
	if len(all) <= room || room < 1 {
		return all, 0, m.styles.faint.Render("enter or esc closes")
	}
	top = clamp(m.detailTop, 0, len(all)-room)
	var more []string
	if top > 0 {
		more = append(more, fmt.Sprintf("↑ %d more above", top))
	}
	if below := len(all) - top - room; below > 0 {
		more = append(more, fmt.Sprintf("↓ %d more below", below))
	}
	hint = m.styles.accent.Render(strings.Join(more, " · ")) + m.styles.faint.Render(" · j/k scroll · enter or esc closes")
	return all[top : top+room], top, hint
}

// overlayWidth is the width of an overlay's box.
func (m Model) overlayWidth() int { return min(m.width-4, 100) }

// clipLines keeps at most n lines of s, the last of them saying how many
// more there were.
func (m Model) clipLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if n < 1 || len(lines) <= n {
		return s
	}
	more := len(lines) - n + 1
	return strings.Join(append(lines[:n-1], m.styles.faint.Render(fmt.Sprintf("… %s (a taller terminal shows them)", engine.Count(more, "more line")))), "\n")
}

func (m Model) faultMenuView(width int) string {
	f := m.fault
	field := func(i int, name, value string) string { return m.menuField(f.field == i, name, 10, value) }
	lat := fmtDelay(faultLatencies[f.latency])
	if faultModes[f.mode] != "latency" {
		lat = m.styles.faint.Render("(latency mode only)")
	}
	rate := fmt.Sprintf("%.0f%% of requests", 100*faultRates[f.rate])
	if faultModes[f.mode] == "stale" {
		rate = m.styles.faint.Render("(whole endpoint)")
	}
	lines := []string{
		m.styles.title.Render("Inject a fault on " + f.endpoint),
		"",
		field(fieldMode, "mode", string(faultModes[f.mode])),
		field(fieldRate, "rate", rate),
		field(fieldLatency, "latency", lat),
		field(fieldDuration, "duration", fmtSpan(faultDurations[f.duration])),
		"",
		wrap(f.describe(), width),
		"",
		m.styles.faint.Render("↑/↓ field · ←/→ value, → up · enter: review and confirm · esc: cancel"),
	}
	return strings.Join(lines, "\n")
}

// wrap breaks text at spaces to width.
func wrap(s string, width int) string {
	return lipgloss.NewStyle().Width(max(width, 10)).Render(s)
}

// menuField is one line of a menu (fault, role): the selected one is marked
// and its value framed, as the one ←/→ change.
func (m Model) menuField(selected bool, name string, nameWidth int, value string) string {
	cur := "  "
	if selected {
		cur = m.styles.accent.Render("▸ ")
		value = "‹ " + value + " ›"
	}
	return cur + fit(name, nameWidth) + value
}

// step moves *v by d through n values, wrapping around (a list of names:
// modes, roles).
func step(v *int, n, d int) { *v = (*v + d + n) % n }
