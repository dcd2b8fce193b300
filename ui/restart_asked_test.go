package ui

import (
	"strings"
	"testing"
)

// restartedRig is a console over one engine whose "instance" then
// restarts (another engine with the same endpoints behind the same
// backend), every control call recorded by the spy.
func restartedRig(t *testing.T) (*spy, *switched) {
	t.Helper()
	a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
	b.read(t, 3, "eth_blockNumber")
	a.read(t, 3, "eth_blockNumber")
	sw := &switched{Backend: Local{Engine: a.eng}, next: Local{Engine: b.eng}}
	return &spy{Backend: sw}, sw
}

// Measured on the binary (serve in one tmux window, console --attach in
// another): f opened the fault menu on steady, serve was restarted, and
// the menu stayed open over the new process, the restart note under it;
// enter and y injected the fault into the new instance, on an endpoint
// chosen from the old one's screen. Every question or menu that acts is
// closed when the instance it was opened on is gone, saying so, and the
// keys that would have answered it send nothing.
func TestRestart_AQuestionOpenWhenTheInstanceRestartsIsClosedUnsent(t *testing.T) {
	for _, c := range []struct {
		name string
		open []string
		what string
	}{
		{"fault menu", []string{"f"}, "the fault menu on alpha"},
		{"fault question", []string{"f", "right", "enter"}, "the question (inject error fault on alpha"},
		{"drain question", []string{"d"}, "the question (drain alpha)"},
		{"role menu", []string{"r"}, "the role menu on alpha"},
		{"hedging off question", []string{"h"}, "the question (hedging off for all methods)"},
		{"delay input", []string{"="}, "the hedge delay input of all methods"},
	} {
		t.Run(c.name, func(t *testing.T) {
			be, sw := restartedRig(t)
			m := console(t, be, 120, 36, false)
			m = press(t, m, c.open...)
			if m.overlay == overlayNone {
				t.Fatalf("%v opened nothing", c.open)
			}
			sw.after.Store(true)
			m = refreshed(t, m)
			if m.overlay != overlayNone {
				t.Errorf("%s is still open over the restarted instance:\n%s", c.name, m.View())
			}
			if !strings.Contains(m.status.text, c.what) || !strings.Contains(m.status.text, "closed, nothing sent") ||
				!strings.Contains(m.status.text, "restarted") {
				t.Errorf("the status line does not say what was closed and why: %q", m.status.text)
			}
			logged := false
			for _, ev := range m.events {
				logged = logged || strings.Contains(ev.Message, c.what) && strings.Contains(ev.Message, "closed unanswered")
			}
			if !logged {
				t.Errorf("the events log does not keep that %s was closed: %v", c.what, m.events)
			}
			// What the operator would have typed next into the old question.
			m = press(t, m, "y", "2", "0", "0", "m", "s", "enter", "y")
			if calls := be.take(); len(calls) > 0 {
				t.Errorf("keys meant for the old instance's %s acted on the new one: %v", c.name, calls)
			}
		})
	}
}

// The screen frozen on one process and the instance restarted behind it:
// d, c, + and - already refused, but f opened its menu and y injected the
// fault, and a (delay back to auto) set it, on the new process the screen
// did not show. A menu open when the restart comes is closed too.
func TestFrozen_FaultAndAutoDoNotActOnAnInstanceThatRestartedBehindTheScreen(t *testing.T) {
	t.Run("keys after the restart", func(t *testing.T) {
		be, sw := restartedRig(t)
		m := console(t, be, 120, 36, false)
		m = press(t, m, "p")
		sw.after.Store(true)
		m = refreshed(t, m)
		for _, keys := range [][]string{{"f"}, {"a"}, {"tab", "j", "a"}} {
			m = press(t, m, keys...)
			if !strings.Contains(m.status.text, "restarted behind the frozen screen") {
				t.Errorf("after %v the status line does not say why nothing was done: %q", keys, m.status.text)
			}
			// f's menu, had it opened: its confirmation and yes.
			m = press(t, m, "enter", "y", "esc")
			if calls := be.take(); len(calls) > 0 {
				t.Errorf("%v on the frozen screen of the old instance acted on the new one: %v", keys, calls)
			}
		}
	})
	t.Run("menu open at the restart", func(t *testing.T) {
		be, sw := restartedRig(t)
		m := console(t, be, 120, 36, false)
		m = press(t, m, "p", "f")
		sw.after.Store(true)
		m = refreshed(t, m)
		if m.overlay != overlayNone || !strings.Contains(m.status.text, "the fault menu on alpha closed, nothing sent") {
			t.Errorf("the fault menu stays open over a restart behind the frozen screen (status %q)", m.status.text)
		}
		m = press(t, m, "enter", "y")
		if calls := be.take(); len(calls) > 0 {
			t.Errorf("the old instance's fault menu acted on the new one: %v", calls)
		}
	})
}

// The instance restarts after the console's last refresh and before the
// operator's y (within a refresh of it, or while a refresh hung on the
// old process going down): nothing on screen can say so yet, and y sent
// the fault, the drain, to the new process. Just before acting, the
// console asks the instance when it started; another process gets
// nothing, and the status line and the events say why.
func TestRestart_AnAnswerGivenBeforeTheRestartIsSeenIsNotSent(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"fault", []string{"f", "enter"}},
		{"drain", []string{"d"}},
		{"hedging off", []string{"h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			be, sw := restartedRig(t)
			m := console(t, be, 120, 36, false)
			m = press(t, m, c.keys...)
			if m.overlay != overlayConfirm {
				t.Fatalf("%v asked nothing", c.keys)
			}
			sw.after.Store(true) // no refresh has seen it
			mm, cmd := m.Update(keyMsg("y"))
			m = mm.(Model)
			if cmd == nil {
				t.Fatal("y sent nothing at all")
			}
			mm, _ = m.Update(cmd())
			m = mm.(Model)
			if calls := be.take(); len(calls) > 0 {
				t.Fatalf("y acted on the process that replaced the one asked about: %v", calls)
			}
			if !strings.Contains(m.status.text, "not sent: the attached instance restarted") {
				t.Errorf("the status line does not say why nothing was done: %q", m.status.text)
			}
			m = refreshed(t, m)
			kept := false
			for _, ev := range m.events {
				kept = kept || strings.Contains(ev.Message, "not sent: the attached instance restarted")
			}
			if !kept {
				t.Errorf("after the restart's refresh, the events do not keep that the answer was not sent: %v", m.events)
			}
		})
	}
}
