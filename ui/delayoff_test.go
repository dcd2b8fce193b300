package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// A method whose hedging is off (the tuning view's "hedging off" row)
// takes a new delay from + - a =, and its row still reads "off": seen
// live, a on eth_call said "✓ hedge delay of eth_call → auto" and
// nothing on screen moved, nor said that hedging stayed off.
func TestUpdate_DelayKeyOnAMethodHedgedOffSaysHedgingStaysOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		off := false
		if err := r.eng.SetHedge(engine.ActorAdmin, engine.HedgeUpdate{Method: "eth_getBalance", Enabled: &off}); err != nil {
			t.Fatal(err)
		}
		m := console(t, sp, 120, 36, false)
		m = press(t, m, "tab", "down")
		if got := m.selectedMethod(); got != "eth_getBalance" {
			t.Fatalf("selected %q", got)
		}
		m = press(t, m, "a")
		wantCalls(t, sp, "SetHedge delay=auto method=eth_getBalance")
		if !strings.Contains(m.status.text, "stays off") {
			t.Errorf("status line %q does not say eth_getBalance's hedging stays off", m.status.text)
		}
		if !strings.Contains(lineWith(m.View(), "stays off"), "stays off") {
			t.Errorf("the screen does not say it:\n%s", m.View())
		}
	})
}

// Hedging off for all methods (h): a delay key says so too.
func TestUpdate_DelayKeyWithHedgingOffSaysHedgingStaysOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		off := false
		if err := r.eng.SetHedge(engine.ActorAdmin, engine.HedgeUpdate{Enabled: &off, AllMethods: true}); err != nil {
			t.Fatal(err)
		}
		m := console(t, sp, 120, 36, false)
		m = press(t, m, "tab", "a")
		wantCalls(t, sp, "SetHedge delay=auto all")
		if !strings.Contains(m.status.text, "stays off") {
			t.Errorf("status line %q does not say hedging stays off", m.status.text)
		}
	})
}
