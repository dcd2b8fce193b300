package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
)

// panicHeld is the latest panic routing seen: its reason at its worst (the
// engine's PanicWorst: its last reason is its recovery, "routable again …
// ends after 1s of it"), the endpoints out at the worst the console saw, and as
// they last were, since when it ran and, once over, when it ended. Its
// banner stays slowdownHold after the end, as the slowdown's does: a panic
// of a second put three banner lines on and off and moved the whole
// screen down and back.
type panicHeld struct {
	reason, out         string // at its worst
	lastReason, lastOut string // the last live banner's: its line count
	worst               int    // the fewest routable
	since, end          time.Time
}

// notePanic follows the snapshot's panic routing: the one in progress, or
// the last one until slowdownHold after its end.
func (m *Model) notePanic() {
	now, s := m.snap.Time, m.snap
	switch {
	case s.Panic:
		p := m.lastPanic
		if p == nil || !p.end.IsZero() {
			p = &panicHeld{since: now, worst: s.Routable + 1}
			m.lastPanic = p
		}
		p.lastReason, p.lastOut, p.end = s.PanicReason, m.outReasons(false), time.Time{}
		if s.Routable < p.worst {
			p.worst, p.reason, p.out = s.Routable, p.lastReason, p.lastOut
		}
		// The engine kept the episode's worst reason: a panic seen only as
		// it recovered held "at its worst: 1 of 2 endpoints routable again".
		if s.PanicWorst != "" {
			p.reason = s.PanicWorst
		}
	case m.lastPanic == nil:
	case m.lastPanic.end.IsZero():
		m.lastPanic.end = now
	case now.Sub(m.lastPanic.end) >= slowdownHold:
		m.lastPanic = nil
	}
}

// panicBanner is the panic routing banner: live, the reason and, on lines
// of their own, each endpoint out and why; held after its end, as many
// lines saying it is over, when it ran and what it was, so that its end
// moves nothing.
func (m Model) panicBanner() []string {
	if m.snap.Panic {
		head, out := m.livePanic(m.snap.PanicReason, m.outReasons(false))
		return append(head, out...)
	}
	p := m.lastPanic
	if p == nil || p.end.IsZero() {
		return nil
	}
	head, out := m.livePanic(p.lastReason, p.lastOut)
	clock := func(t time.Time) string { return t.In(m.opts.Location).Format("15:04:05") }
	lines := m.bannerLinesN(m.styles.warn, fmt.Sprintf("⚠ PANIC ROUTING over %s ago (%s–%s), at its worst: %s",
		fmtAge(m.snap.Time.Sub(p.end)), clock(p.since), clock(p.end), p.reason), len(head))
	if len(out) > 0 {
		why := "none out"
		if p.out != "" {
			why = "out: " + p.out
		}
		lines = append(lines, m.bannerLinesN(m.styles.warn, why, len(out))...)
	}
	return lines
}

// livePanic is the live banner's headline and its line of endpoints out
// (none when none is).
func (m Model) livePanic(reason, out string) (head, outLines []string) {
	head = m.panicHeadline(reason)
	if out != "" {
		outLines = m.banner("out: " + out)
	}
	return head, outLines
}

// panicHeadline is the engine's reason whole, then what panic routing
// does in as many words as the banner's two lines leave room for: at 80
// columns a reason that names the endpoints it does not count ("1 of 2
// endpoints routable (1 drained not counted), below …") left "… not
// drained or…" of the sentence after it. The reason's figures come first;
// the out line names the endpoints left out and why.
func (m Model) panicHeadline(reason string) []string {
	msg := "⚠ PANIC ROUTING: " + reason
	for _, does := range []string{"; requests go to every endpoint not drained or refusing, least bad first.", "; requests go to the least bad endpoints."} {
		if len(strings.Split(wrap(msg+does, m.width-2), "\n")) <= 2 {
			return m.banner(msg + does)
		}
	}
	return m.banner(msg + ".")
}

// bannerIn is msg in style on at most n lines of the terminal's width; a
// cut one ends in "…".
func (m Model) bannerIn(style lipgloss.Style, msg string, n int) []string {
	lines := strings.Split(wrap(msg, m.width-2), "\n")
	if len(lines) > n {
		lines = lines[:n]
		lines[n-1] = strings.TrimRight(lines[n-1], " ") + "…"
	}
	for i := range lines {
		lines[i] = style.Width(m.width).Render(" " + strings.TrimRight(lines[i], " "))
	}
	return lines
}

// bannerLinesN is bannerIn on exactly n lines (blank ones added).
func (m Model) bannerLinesN(style lipgloss.Style, msg string, n int) []string {
	lines := m.bannerIn(style, msg, n)
	for len(lines) < n {
		lines = append(lines, style.Width(m.width).Render(""))
	}
	return lines
}
