package ui

import (
	"fmt"
	"time"
)

// staleFor is how long the engine has not answered: since the first
// refresh it did not answer was sent. The header's STALE and the drain
// question both say this one figure.
func (m Model) staleFor() time.Duration { return m.opts.Now().Sub(m.staleFrom) }

// figuresAge is how old the pool's figures an action decides by are (the
// newest Snapshot, the one kept behind a frozen screen too), on the
// engine's clock. That answer came before the unanswered refresh was
// sent, so it is never younger than staleFor; held to it, a clock step
// between the two readings cannot make the question contradict itself.
func (m Model) figuresAge() time.Duration {
	s := m.snap
	if m.frozen && m.haveLive {
		s = m.live
	}
	return max(m.engineNow().Sub(s.Time), m.staleFor())
}

// confirmQuestion is the open question as drawn now: one that rests on
// the pool's figures ends with what they are.
func (m Model) confirmQuestion() string {
	if !m.confirm.figuresNote {
		return m.confirm.question
	}
	return m.confirm.question + m.drainFiguresNote()
}

// drainFiguresNote says what a drain question's figures are when they
// are not the pool now ("" when they are).
func (m Model) drainFiguresNote() string {
	switch {
	case m.fetchErr != nil:
		// The figures are the last answer's, frozen or not.
		return fmt.Sprintf(" (STALE: the engine has not answered for %s; these figures are its last answer, %s old, and the drain may fail.)",
			fmtAge(m.staleFor()), fmtAge(m.figuresAge()))
	case m.frozen && m.haveLive:
		return " (The screen is frozen; these figures are the pool now.)"
	case m.frozen:
		return " (The screen is frozen and nothing newer has come since: these figures are from when it froze.)"
	}
	return ""
}
