package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/themes"
)

// An attached instance that restarted has seen none of the methods yet:
// its first Snapshot lacked the method under the cursor, the cursor kept
// its row number, landed on another method and followed that one for
// good (120×36, a serve restarted under the demo load: the cursor on
// eth_call came back on eth_getBalance, and + tuned eth_getBalance).
func TestUpdate_MethodCursorReturnsToItsMethodAfterARestart(t *testing.T) {
	a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
	for _, meth := range []string{"eth_blockNumber", "eth_call", "eth_getBalance"} {
		a.read(t, 1, meth)
	}
	for _, meth := range []string{"eth_blockNumber", "eth_getBalance"} {
		b.read(t, 1, meth)
	}
	be := &switched{Backend: Local{Engine: a.eng}, next: Local{Engine: b.eng}}
	sp := &spy{Backend: be}
	m := console(t, sp, 120, 36, false)
	m = press(t, m, "tab", "down", "down")
	if got := m.selectedMethod(); got != "eth_call" {
		t.Fatalf("selected %q", got)
	}
	be.after.Store(true)
	m = refreshed(t, m) // the new instance has not seen eth_call yet
	b.read(t, 1, "eth_call")
	m = refreshed(t, m)
	if got := m.selectedMethod(); got != "eth_call" {
		t.Fatalf("eth_call is back in the methods, the cursor is on %q", got)
	}
	m = press(t, m, "+")
	if calls := sp.take(); len(calls) != 1 || !strings.HasSuffix(calls[0], "method=eth_call") {
		t.Fatalf("+ made %q", calls)
	}
}

// A cursor the operator moves is theirs: the method lost in a restart
// does not pull it back.
func TestUpdate_MethodCursorMovedAfterARestartStaysWhereMoved(t *testing.T) {
	m := fixedModel(healthySnapshot(), themes.Default(), 120, 36)
	m = press(t, m, "tab", "down", "down")
	lost := m.selectedMethod()
	snap := healthySnapshot()
	delete(snap.Methods, lost)
	m.onSnapshot(snapshotMsg{snap: snap})
	m = press(t, m, "g")
	m.onSnapshot(snapshotMsg{snap: healthySnapshot()})
	if got := m.selectedMethod(); got != "" {
		t.Fatalf("moved to all methods after %s went, the cursor is on %q", lost, got)
	}
}
