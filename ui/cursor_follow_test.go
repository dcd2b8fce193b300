package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// A method first seen sorts in among the others: the cursor and an open
// delay input stay on the method the operator chose.

func TestUpdate_MethodCursorFollowsItsMethodWhenANewOneSortsBefore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "tab", "down")
		if got := m.selectedMethod(); got != "eth_getBalance" {
			t.Fatalf("selected %q", got)
		}
		r.read(t, 1, "eth_chainId") // sorts before eth_getBalance
		m = refreshed(t, m)
		if got := m.selectedMethod(); got != "eth_getBalance" {
			t.Fatalf("after eth_chainId came, the cursor is on %q", got)
		}
		m = press(t, m, "+")
		if calls := sp.take(); len(calls) != 1 || !strings.HasSuffix(calls[0], "method=eth_getBalance") {
			t.Fatalf("+ made %q", calls)
		}
	})
}

func TestUpdate_DelayInputSetsTheMethodItsPromptNamed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "tab", "down", "=")
		if !strings.Contains(m.View(), "hedge delay of eth_getBalance:") {
			t.Fatalf("prompt:\n%s", m.View())
		}
		r.read(t, 1, "eth_chainId")
		m = refreshed(t, m)
		m = press(t, m, "1500ms", "enter")
		wantCalls(t, sp, "SetHedge delay=1500ms method=eth_getBalance")
	})
}

func TestUpdate_DelayInputOfAMethodGoneSetsNothing(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 100, 30)
	names := m.methodNames()
	m = press(t, m, "tab", "down", "=")
	gone := names[0]
	if !strings.Contains(m.View(), "hedge delay of "+gone+":") {
		t.Fatalf("prompt:\n%s", m.View())
	}
	delete(m.snap.Methods, gone) // the attached instance restarted without it
	m = press(t, m, "1s", "enter")
	if !m.status.err || !strings.Contains(m.status.text, gone+" is no longer in the methods panel") {
		t.Fatalf("status %q", m.status.text)
	}
}
