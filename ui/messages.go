package ui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/rpcdash/rpcdash/engine"
)

// Messages the console's commands report with.
type (
	// tickMsg asks for a refresh.
	tickMsg time.Time
	// snapshotMsg is the answer to one refresh.
	snapshotMsg struct {
		snap   engine.Snapshot
		events []engine.Event
		err    error
	}
	// actionDoneMsg is the result of one control call.
	actionDoneMsg struct {
		act action
		err error
	}
)

// fetchTimeout bounds one refresh: an instance that went away must not
// hold the console's only refresh slot for long.
const fetchTimeout = 3 * time.Second

// actionTimeout bounds one control call.
const actionTimeout = 5 * time.Second

func tickCmd(every time.Duration) tea.Cmd {
	return tea.Tick(every, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// fetchCmd asks for a Snapshot and the events after seq. It gets copies of
// what it needs; it never reads the model from its own goroutine.
func fetchCmd(be Backend, after uint64) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
		defer cancel()
		// The events first: an attached instance that restarts between
		// the two calls then gives the old process's events and the new
		// one's Snapshot, whose restart drops them (onSnapshot). Asked
		// after the Snapshot, they were the new process's events past
		// the old one's last seq, shown among the old one's.
		evs, evErr := be.Events(ctx, after)
		s, err := be.Snapshot(ctx)
		if err == nil {
			err = evErr
		}
		if err != nil {
			// The Snapshot's error first: it says what is at the address
			// ("not an rpcdash answer, from …/v1/status").
			return snapshotMsg{err: err}
		}
		return snapshotMsg{snap: s, events: evs}
	}
}

// actionKind is what a control call does.
type actionKind int

const (
	actDrain actionKind = iota
	actUndrain
	actFault
	actClearFault
	actHedge
	actRole
)

// action is one control call, described for the status line.
type action struct {
	kind     actionKind
	endpoint string
	spec     engine.FaultSpec
	hedge    engine.HedgeUpdate
	role     string   // actRole
	share    *float64 // actRole: nil is the role's default
	force    bool     // actRole: take a promotion the engine would refuse
	desc     string   // "drain tail", "hedge delay of eth_call → 120ms"
	// on is when the instance the operator saw as it asked was started:
	// an attached instance that restarted since, before a refresh showed
	// it, is another process, and the action is not sent to it.
	on  time.Time
	loc *time.Location // the console's, for the time it says
}

func (a action) run(ctx context.Context, be Backend) error {
	switch a.kind {
	case actDrain:
		return be.Drain(ctx, a.endpoint)
	case actUndrain:
		return be.Undrain(ctx, a.endpoint)
	case actFault:
		return be.InjectFault(ctx, a.endpoint, a.spec)
	case actClearFault:
		return be.ClearFault(ctx, a.endpoint)
	case actRole:
		return be.SetRole(ctx, a.endpoint, a.role, a.share, a.force)
	default:
		return be.SetHedge(ctx, a.hedge)
	}
}

func actionCmd(be Backend, a action) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		if err := a.sameInstance(ctx, be); err != nil {
			return actionDoneMsg{act: a, err: err}
		}
		return actionDoneMsg{act: a, err: a.run(ctx, be)}
	}
}

// sameInstance asks an attached instance when it was started, just before
// acting: one that restarted after the last refresh (a question answered
// within a refresh of the restart, or while a refresh hung on the old
// process going down) is another process, which the question was not
// about. An instance that does not answer is left to the action itself
// to fail. The engine in process never restarts.
func (a action) sameInstance(ctx context.Context, be Backend) error {
	if _, local := be.(Local); local || a.on.IsZero() {
		return nil
	}
	s, err := be.Snapshot(ctx)
	if err != nil || s.Started.Equal(a.on) {
		return nil
	}
	return fmt.Errorf("not sent: the attached instance restarted (up since %s) after the screen last showed it; look at the new one first",
		s.Started.In(a.loc).Format("15:04:05"))
}
