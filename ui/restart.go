package ui

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rpcdash/rpcdash/engine"
)

// restartNote says that the attached instance restarted and what the
// old process held that the new one does not: a restart forgets every
// drain, fault, role change and live hedge setting, and an operator who
// drained an endpoint in an incident, or demoted the old provider in a
// cutover, must not find it taking traffic unannounced. also are facts of
// the console's own (a question it closed), said after what the restart
// undid: that comes first, where a short status line still shows it.
func (m Model) restartNote(was, now engine.Snapshot, also ...string) string {
	note := "the attached instance restarted (up since " + now.Started.In(m.opts.Location).Format("15:04:05") + ")"
	var lost []string
	for _, old := range was.Endpoints {
		cur, ok := now.Endpoint(old.Name)
		if !ok {
			lost = append(lost, old.Name+" is no longer in the pool")
			continue
		}
		if old.Drained && !cur.Drained {
			lost = append(lost, old.Name+" is no longer drained")
		}
		if was, is := engine.RoleLabel(old.Role, old.Share), engine.RoleLabel(cur.Role, cur.Share); was != is {
			lost = append(lost, fmt.Sprintf("%s is %s again (was %s)", old.Name, is, was))
		}
		if old.Fault != nil && cur.Fault == nil {
			lost = append(lost, fmt.Sprintf("%s's %s fault is gone", old.Name, old.Fault.Mode))
		}
	}
	if was.Hedge.Enabled != now.Hedge.Enabled || was.Hedge.Delay != now.Hedge.Delay {
		lost = append(lost, "hedging is back to its config")
	} else {
		lost = append(lost, methodHedgingLost(was, now)...)
	}
	// What it undid first: at 80 columns the status line holds little more.
	if len(lost) > 0 {
		note += ": " + strings.Join(lost, ", ")
	}
	for _, a := range also {
		note += "; " + a
	}
	return note + "; the events before it are gone"
}

// methodHedgingLost is each method's live hedge setting (+, -, =, t) that
// a restart forgot: a live delay never outlives its process; a method's
// hedging on or off is compared once the new one has seen the method.
func methodHedgingLost(was, now engine.Snapshot) []string {
	var lost []string
	for _, name := range slices.Sorted(maps.Keys(was.Methods)) {
		old := was.Methods[name].Hedge
		if old == nil {
			continue
		}
		cur := now.Methods[name].Hedge
		switch {
		case old.DelaySource == "live" && (cur == nil || cur.DelaySource != "live" || cur.Delay != old.Delay):
			lost = append(lost, fmt.Sprintf("%s's hedge delay %s (live) is gone", name, fmtDelay(old.Delay)))
		case cur != nil && !old.Enabled && cur.Enabled:
			lost = append(lost, name+"'s hedging off is gone")
		}
	}
	return lost
}

// closeAsked closes a question, menu or input that would act on the
// engine (fault and role menus, any confirmation, the delay input) and
// says what it was, "" when none is open. Called when the instance the
// screen showed as it opened is gone: its endpoint, role, share and
// figures were the old process's, and y or enter would have acted on a
// new one the operator never saw (the same name may be another endpoint,
// or one that has lost the state the question was about).
func (m *Model) closeAsked() string {
	var what string
	switch m.overlay {
	case overlayFault:
		what = "the fault menu on " + m.fault.endpoint
		m.overlay, m.fault = overlayNone, faultMenu{}
	case overlayRole:
		what = "the role menu on " + m.role.endpoint
		m.overlay, m.role = overlayNone, roleMenu{}
	case overlayConfirm:
		what = "the question (" + m.confirm.act.desc + ")"
		m.overlay, m.confirm = m.confirm.back, confirmDialog{}
	case overlayInput:
		if m.inputKind != inputDelay {
			return ""
		}
		target := m.inputMethod
		if target == "" {
			target = "all methods"
		}
		what = "the hedge delay input of " + target
		m.overlay = overlayNone
		m.input.Blur()
	default:
		return ""
	}
	return what
}
