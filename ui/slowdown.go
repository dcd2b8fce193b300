package ui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// slowdownHold is how long the slowdown banner stays after a slowdown ends.
// Slowdowns of a second come in runs (a hung endpoint beside a slow one):
// a banner line on and off with each would move the whole screen.
const slowdownHold = 10 * time.Second

// noteSlowdown follows the snapshot's slowdown: the one in progress, or
// the last one until slowdownHold after its end.
func (m *Model) noteSlowdown() {
	now := m.snap.Time
	switch {
	case m.snap.Slowdown != nil:
		sd := *m.snap.Slowdown
		m.slowdown, m.slowdownEnd = &sd, time.Time{}
	case m.slowdown == nil:
	case m.slowdownEnd.IsZero():
		m.slowdownEnd = now
	case now.Sub(m.slowdownEnd) >= slowdownHold:
		m.slowdown, m.slowdownEnd = nil, time.Time{}
	}
}

// slowdownBanner is one line, live or held, so that its end moves nothing.
func (m Model) slowdownBanner() []string {
	sd := m.slowdown
	if sd == nil {
		return nil
	}
	msg := fmt.Sprintf("⚠ SLOWDOWN (%s, not charged to breakers): %s", sd.Kind, sd.Reason)
	if !m.slowdownEnd.IsZero() {
		// Its end is the engine's: no deadline excused for a second. The
		// endpoints may still be slow, their deadlines grown to their pace
		// (seen: "over 8s ago" beside every sim still 1 s slow).
		why := "the pool back at its pace, or its deadlines grown to it"
		if sd.Kind == "self" {
			why = "rpcdash back at its pace"
		}
		last := sd.Last // the engine's; an older one's Snapshot lacks it
		if last.IsZero() {
			last = m.slowdownEnd
		}
		// What happened first: at 80 columns the reason came after the
		// explanation and was cut whole.
		msg = fmt.Sprintf("⚠ SLOWDOWN over (no deadline excused for %s): %s (%s)",
			fmtAge(m.snap.Time.Sub(last)), sd.Reason, why)
	}
	line := ansi.Truncate(" "+msg, m.width, "…")
	st := m.styles.banner
	if !m.slowdownEnd.IsZero() {
		st = m.styles.warn
	}
	return []string{st.Width(m.width).Render(line)}
}
