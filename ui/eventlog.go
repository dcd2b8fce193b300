package ui

import (
	"strings"

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

// filterShows says whether the events filter lets ev through.
func (m Model) filterShows(ev engine.Event) bool {
	return m.evFilter == "" || strings.HasPrefix(ev.Endpoint, m.evFilter)
}

func (m Model) viewEvents(width, rows int) string {
	st := m.styles
	evs := m.filteredEvents()
	nameW := len("ENDPOINT")
	for _, ep := range m.snap.Endpoints {
		nameW = max(nameW, len(ep.Name))
	}
	nameW = min(nameW, 16)
	title := "TYPE     " + fit("ENDPOINT", nameW) + " ACTOR   EVENT (newest first)"
	if m.evFilter != "" {
		title += " · only " + m.evFilter + "* (esc clears)"
	}
	head := st.faint.Render(fit("TIME     "+title, width))
	if m.marksFocus(focusEvents) {
		// The marker goes where the tables have it, in the first cell; the
		// other columns stay where they are.
		head = st.title.Render("▶") + st.faint.Render(fit(" TIME   "+title, width-1))
	}
	lines := []string{head}
	start := clamp(m.evOffset, 0, max(0, len(evs)-1))
	for i := start; i < len(evs) && len(lines) < rows; i++ {
		ev := evs[i]
		head := ev.Time.In(m.opts.Location).Format("15:04:05") + " " + fit(string(ev.Type), 8) + " " + fit(ev.Endpoint, nameW) + " " + fit(string(ev.Actor), 7) + " "
		msg := ev.Message
		if ev.From != "" && ev.To != "" {
			msg = ev.From + "→" + ev.To + " " + msg
		}
		style := st.text
		switch {
		case ev.Type == engine.EventBreaker && ev.To == engine.BreakerOpen.String():
			style = st.err
		case ev.Type == "console":
			style = st.err
		case ev.Actor == engine.ActorConsole || ev.Actor == engine.ActorAdmin:
			style = st.accent
		}
		lines = append(lines, fit(st.faint.Render(head)+style.Render(msg), width))
	}
	if len(evs) == 0 {
		lines = append(lines, st.faint.Render("no events yet"))
	}
	return strings.Join(lines, "\n")
}
