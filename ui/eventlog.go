package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/rpcdash/rpcdash/engine"
)

// filteredEvents are the kept events, newest first, of the endpoint the
// filter names (prefix match), or all.
func (m Model) filteredEvents() []engine.Event {
	out := make([]engine.Event, 0, len(m.events))
	for i := len(m.events) - 1; i >= 0; i-- {
		ev := m.events[i]
		if m.filterShows(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// filterShows says whether the events filter lets ev through. A gap's
// line passes any filter: the events it counts may be the endpoint's.
func (m Model) filterShows(ev engine.Event) bool {
	return m.evFilter == "" || ev.Type == eventGap || strings.HasPrefix(ev.Endpoint, m.evFilter)
}

// eventGap is the type of the console's line for events that left the
// instance's log before the console read them.
const eventGap engine.EventType = "gap"

// gapEvent is the line that counts the events of seq lo to hi a refresh
// brought into the list without showing them: left of them had left the
// instance's log (its newest engine.EventCapacity) before they were read,
// the others came at once, more than the console keeps. A list that
// closed over them read as if nothing had happened then. The line is the
// console's, at the time it read them, so that it shows where the reader
// is, at the top, and goes down the list as any event does.
func (m Model) gapEvent(lo, hi, left uint64) engine.Event {
	var why []string
	if left > 0 {
		w := fmt.Sprintf("%d left the instance's log (it keeps its newest %d) ", left, engine.EventCapacity)
		switch {
		case lo == 1:
			w += "before the console first read it"
		case m.evWhy != "":
			w += m.evWhy
		default:
			w += "between two refreshes"
		}
		why = append(why, w)
	}
	if past := hi - lo + 1 - left; past > 0 {
		why = append(why, fmt.Sprintf("%d came at once past the %d the console keeps", past, maxEvents))
	}
	msg := fmt.Sprintf("%s not shown (seq %d–%d): %s", engine.Count(int(hi-lo+1), "event"), lo, hi, strings.Join(why, "; "))
	return engine.Event{Time: m.engineNow(), Type: eventGap, Actor: engine.ActorConsole, Message: msg}
}

func (m Model) viewEvents(width, rows int) string {
	st := m.styles
	evs := m.filteredEvents()
	nameW := len("ENDPOINT")
	for _, ep := range m.snap.Endpoints {
		nameW = max(nameW, len(ep.Name))
	}
	nameW = min(nameW, 16)
	start := clamp(m.evOffset, 0, max(0, len(evs)-1))
	lead, cols, note := "TIME     ", "TYPE     "+fit("ENDPOINT", nameW)+" ACTOR   EVENT ", "(newest first)"
	filter := ""
	if m.evFilter != "" {
		filter = " · only " + m.evFilter + "* (esc clears)"
	}
	mark := ""
	if m.marksFocus(focusEvents) {
		// The marker goes where the tables have it, in the first cell; the
		// other columns stay where they are.
		lead, mark = " TIME   ", st.title.Render("▶")
	}
	head := mark + st.faint.Render(fit(lead+cols+note+filter, width-lipgloss.Width(mark)))
	if start > 0 {
		// Scrolled down, the lines being read stay put while new events
		// arrive above them (addEvents): say how many are hidden there,
		// before the filter's note so that a long filter does not cut it.
		head = mark + st.faint.Render(lead+cols) + st.warn.Render(fmt.Sprintf("↑ %d newer above (g)", start))
		if filter != "" {
			head += st.faint.Render(filter)
		}
		head = fit(head, width)
	}
	lines := []string{head}
	for i := start; i < len(evs) && len(lines) < rows; i++ {
		ev := evs[i]
		head := ev.Time.In(m.opts.Location).Format("15:04:05") + " " + fit(string(ev.Type), 8) + " " + fitName(ev.Endpoint, nameW) + " " + fit(string(ev.Actor), 7) + " "
		msg := ev.Message
		if ev.From != "" && ev.To != "" {
			msg = transitionText(ev)
		}
		style := st.text
		switch {
		case ev.Type == engine.EventBreaker && ev.To == engine.BreakerOpen.String():
			style = st.err
		case ev.Type == "console":
			style = st.err
		case ev.Type == eventGap:
			style = st.warn
		case ev.Actor == engine.ActorConsole || ev.Actor == engine.ActorAdmin:
			style = st.accent
		}
		if i == start && m.focus == focusEvents && lipgloss.Width(head)+lipgloss.Width(msg) > width {
			// The events focused, the one at the top is read whole: a
			// message cut with "…" (nearly all at 80 columns) had no
			// other place in the console to be read.
			lines = append(lines, m.wholeEvent(head, style.Render(msg), width, rows-len(lines))...)
			continue
		}
		lines = append(lines, fit(st.faint.Render(head)+style.Render(msg), width))
	}
	switch {
	case len(evs) == 0 && m.evFilter != "" && len(m.events) > 0:
		lines = append(lines, st.faint.Render(fmt.Sprintf("no events of an endpoint whose name starts with %q (esc clears the filter)", m.evFilter)))
	case len(evs) == 0:
		lines = append(lines, st.faint.Render("no events yet"))
	}
	return strings.Join(lines, "\n")
}

// wholeEvent is an event's line wrapped under its message's column, in at
// most room lines (the last cut, "…", only when even those are too few).
func (m Model) wholeEvent(head, msg string, width, room int) []string {
	indent := lipgloss.Width(head)
	parts := wrapLines(msg, width-indent)
	if len(parts) > room {
		parts = parts[:room]
		parts[room-1] = fit(strings.TrimRight(parts[room-1], " ")+" …", width-indent)
	}
	out := make([]string, 0, len(parts))
	for j, part := range parts {
		lead := strings.Repeat(" ", indent)
		if j == 0 {
			lead = m.styles.faint.Render(head)
		}
		out = append(out, fit(lead+part, width))
	}
	return out
}

// transitionText is an event's from→to and its message, the message's
// first word left out when it only repeats the state it went to: a
// drain's "drained; 2 requests in flight finish" read "active→drained
// drained; …". The engine's message (GET /v1/events, which scripts read)
// stays as it is.
func transitionText(ev engine.Event) string {
	head, rest := ev.From+"→"+ev.To, ev.Message
	switch {
	case rest == ev.To:
		return head
	case strings.HasPrefix(rest, ev.To+";"), strings.HasPrefix(rest, ev.To+":"), strings.HasPrefix(rest, ev.To+","):
		return head + rest[len(ev.To):]
	}
	return head + " " + rest
}
