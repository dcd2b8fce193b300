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
		msg = fmt.Sprintf("⚠ SLOWDOWN over %s ago (%s, not charged to breakers): %s",
			fmtAge(m.snap.Time.Sub(m.slowdownEnd)), sd.Kind, sd.Reason)
	}
	line := ansi.Truncate(" "+msg, m.width, "…")
	st := m.styles.banner
	if !m.slowdownEnd.IsZero() {
		st = m.styles.warn
	}
	return []string{st.Width(m.width).Render(line)}
}
