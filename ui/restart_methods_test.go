package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

// A restart also forgets a method's live hedge settings: measured on the
// binary, + set eth_blockNumber's delay to 75ms (live), the serve
// restarted, the row came back at 250ms cold, and the console said only
// "the attached instance restarted (up since 08:57:30) the events before
// it are gone".
func TestEvents_ARestartSaysTheMethodHedgeSettingsItUndid(t *testing.T) {
	a, b := newRig(t, "alpha", "beta"), newRig(t, "alpha", "beta")
	a.read(t, 3, "eth_blockNumber")
	a.read(t, 3, "eth_getBalance")
	b.read(t, 3, "eth_blockNumber")
	b.read(t, 3, "eth_getBalance")
	delay, off := "75ms", false
	if err := a.eng.SetHedge(engine.ActorConsole, engine.HedgeUpdate{Method: "eth_blockNumber", Delay: &delay}); err != nil {
		t.Fatal(err)
	}
	if err := a.eng.SetHedge(engine.ActorConsole, engine.HedgeUpdate{Method: "eth_getBalance", Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	_, note := restartedTo(t, a, b)
	for _, want := range []string{"eth_blockNumber's hedge delay 75ms (live) is gone", "eth_getBalance's hedging off is gone", "; the events before it are gone"} {
		if !strings.Contains(note, want) {
			t.Errorf("the events log's restart line %q does not say %q", note, want)
		}
	}
}
