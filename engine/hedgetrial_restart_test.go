package engine_test

import (
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// A pool-wide PUT /v1/hedge restarts the trial (since_change) of the
// methods whose hedging it changed, and only those: a method held at its
// own live delay keeps the trial of its own change. The tune audit saw a
// global {"delay":"auto"} restart the trial of a method set to 60 ms,
// losing what had been measured since.
func TestTuning_AGlobalUpdateRestartsOnlyTheTrialsOfMethodsItChanged(t *testing.T) {
	h := newHarness(t, hedgeOn("100ms"), sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	mustOK(t, h.call(2, "eth_getCode", addr, "latest"))
	put := func(body string) {
		t.Helper()
		if code, b := h.adminDo("PUT", "/v1/hedge", body); code != 200 {
			t.Fatalf("%s: %d %s", body, code, b)
		}
	}
	trial := func(method string) *engine.HedgeTrial {
		t.Helper()
		var md engine.MethodDistribution
		h.getJSON("/v1/methods/"+method+"/distribution", &md)
		return md.Trial
	}
	put(`{"method":"eth_getBalance","delay":"60ms"}`)
	first := trial("eth_getBalance")
	if first == nil || first.Delay != 60*time.Millisecond {
		t.Fatalf("the method's change started no trial: %+v", first)
	}
	mustOK(t, h.call(3, "eth_getBalance", addr, "latest"))

	put(`{"delay":"auto"}`) // eth_getBalance stays at its own 60 ms
	if got := trial("eth_getBalance"); got == nil || !got.Since.Equal(first.Since) || got.Samples != 1 {
		t.Errorf("eth_getBalance's delay did not change, yet its trial restarted: since %v → %+v", first.Since, got)
	}
	if got := trial("eth_getCode"); got == nil || got.DelaySource == "live" {
		t.Errorf("eth_getCode went from 100ms to auto: want a trial of auto, got %+v", got)
	}

	put(`{"delay":"auto"}`) // auto again: nothing changes for anyone
	if got := trial("eth_getBalance"); got == nil || !got.Since.Equal(first.Since) {
		t.Errorf("a repeated update restarted eth_getBalance's trial: %+v", got)
	}
	code := trial("eth_getCode")
	put(`{"budget":0.5}`) // the budget caps every method's hedges: both change
	if got := trial("eth_getBalance"); got == nil || got.Since.Equal(first.Since) {
		t.Errorf("a budget change left eth_getBalance's trial as it was: %+v", got)
	}
	if got := trial("eth_getCode"); got == nil || got.Since.Equal(code.Since) {
		t.Errorf("a budget change left eth_getCode's trial as it was: %+v", got)
	}
}
