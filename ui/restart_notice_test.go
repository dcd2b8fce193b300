package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// Attached to a serve that restarted, the console wiped its events log
// (the operator's own drain and fault lines with it) and said nothing:
// the drain of tail and the fault on steady were gone with the old
// process, tail took traffic again, and only "up 3s" in the header
// hinted at why.
func TestEvents_ARestartIsSaidWithWhatItUndid(t *testing.T) {
	a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
	a.eng.Drain(engine.ActorConsole, "alpha")
	if err := a.eng.InjectFault(engine.ActorConsole, "beta", engine.FaultSpec{Mode: engine.FaultLatency, Latency: engine.Duration(time.Second), Duration: engine.Duration(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	m, note := restartedTo(t, a, b)
	for _, want := range []string{"restarted", "alpha is no longer drained", "beta's latency fault is gone"} {
		if !strings.Contains(note, want) {
			t.Errorf("the events log's restart line %q does not say %q", note, want)
		}
	}
	if !strings.Contains(m.status.text, "restarted") {
		t.Errorf("status line %q", m.status.text)
	}
	if !strings.Contains(m.View(), "restarted") {
		t.Errorf("the screen does not say the instance restarted:\n%s", m.View())
	}
}

// A restart also undoes role changes: the audit promoted a shadow to
// primary and made an old primary a shadow at 25%, restarted the serve,
// and the attached console said only that drains, faults and hedging were
// back, so the old provider took client traffic again unannounced.
func TestEvents_ARestartSaysTheRoleChangesItUndid(t *testing.T) {
	a, b := newRig(t, "alpha", "beta", "gamma"), newRig(t, "alpha", "beta", "gamma")
	quarter := 0.25
	if _, err := a.eng.SetRole(engine.ActorConsole, "beta", engine.RoleShadow, &quarter); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eng.SetRole(engine.ActorConsole, "gamma", engine.RoleStandby, nil); err != nil {
		t.Fatal(err)
	}
	_, note := restartedTo(t, a, b)
	for _, want := range []string{"beta is primary again (was shadow 25%)", "gamma is primary again (was standby)"} {
		if !strings.Contains(note, want) {
			t.Errorf("the events log's restart line %q does not say %q", note, want)
		}
	}
	if strings.Contains(note, "alpha") {
		t.Errorf("the restart line %q names alpha, whose role did not change", note)
	}
}

// restartedTo is a console attached to a's engine that finds b's in its
// place (a restart), and the events log's line saying so.
func restartedTo(t *testing.T, a, b *rig) (Model, string) {
	t.Helper()
	be := &switched{Backend: Local{Engine: a.eng}, next: Local{Engine: b.eng}}
	m := console(t, be, 120, 36, false)
	be.after.Store(true)
	m = refreshed(t, refreshed(t, m))
	var note string
	for _, ev := range m.events {
		if strings.Contains(ev.Message, "restarted") {
			note = ev.Message
		}
	}
	return m, note
}
