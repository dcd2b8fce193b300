package ui

import "time"

// steppedDelay is the delay the last + or - set, until a Snapshot shows
// it: a second press before then stepped from the Snapshot's older delay
// and set the same value again (seen: + + on eth_call sent 75ms twice,
// two identical events, one step taken).
type steppedDelay struct {
	target string // the method, "" for all methods; zero delay: none
	delay  time.Duration
	landed bool // the engine took it
	since  int  // Snapshots taken since it landed
}

// steppedHold is how many Snapshots after it landed a step is kept when
// none shows it (another operator set something else meanwhile).
const steppedHold = 2

// stepFrom is the delay a + or - on target steps from: the one just
// stepped to while no Snapshot shows it yet, else the Snapshot's.
func (m Model) stepFrom(target string) time.Duration {
	if s := m.stepped; s.delay > 0 && s.target == target {
		return s.delay
	}
	return m.currentDelay()
}

// settleStep drops the step once a Snapshot shows it, or steppedHold
// Snapshots after it landed.
func (m *Model) settleStep() {
	s := &m.stepped
	if s.delay == 0 {
		return
	}
	shown := false
	if s.target == "" {
		shown = m.snap.Hedge.Delay == s.delay
	} else if h := m.snap.Methods[s.target].Hedge; h != nil {
		shown = h.Delay == s.delay
	}
	if s.landed {
		s.since++
	}
	if shown || s.since >= steppedHold {
		*s = steppedDelay{}
	}
}
