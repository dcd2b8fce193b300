package ui

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
	"github.com/rpcdash/rpcdash/themes"
)

// An endpoint that answered it cannot serve a method says so in its
// badges (the first method and how many more; no-m when narrow) and, per
// method with its end, in the detail, beside a method's 429 back-off.
func TestView_CannotServeIsNamedInBadgesAndDetail(t *testing.T) {
	for _, c := range []struct {
		w, h        int
		alchemy, in string
	}{
		{160, 48, "429 eth_call no-m", "no eth_getLogs"},
		{100, 30, "429 eth_call no-m", "no eth_getLogs"},
		{80, 24, "429m no-m", "no-m"},
	} {
		got := fixedModel(cannotServeSnapshot(), themes.Default(), c.w, c.h).View()
		for _, want := range [][2]string{{"alchemy ", c.alchemy}, {"infura ", c.in}} {
			// The badges follow the state, whether the provider column shows or not.
			if !strings.Contains(lineWith(got, want[0]), "● closed    "+want[1]) {
				t.Errorf("%d×%d: %s lacks %q:\n%s", c.w, c.h, want[0], want[1], got)
			}
		}
	}
	s := cannotServeSnapshot()
	s.Endpoints[0].Methods["eth_call"] = healthySnapshot().Endpoints[0].Methods["eth_call"]
	if got := fixedModel(s, themes.Default(), 160, 48).View(); !strings.Contains(lineWith(got, "alchemy "), "● closed    no eth_getLogs +1 ") {
		t.Errorf("two methods it cannot serve, no back-off: want no eth_getLogs +1:\n%s", got)
	}
	detail := strings.Join(fixedModel(cannotServeSnapshot(), themes.Default(), 160, 48).detailLines(200), "\n")
	for _, want := range []string{
		"429 back-off: eth_call, sent to the other endpoints until 12:00:20 (20s left)",
		"cannot serve: eth_getLogs, asked after the endpoints that can until 12:00:10 (10s left)",
		"cannot serve: trace_block, asked after the endpoints that can until 12:00:04 (4s left)",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
	detail = strings.Join(fixedModel(healthySnapshot(), themes.Default(), 160, 48).detailLines(200), "\n")
	if strings.Contains(detail, "cannot serve") || strings.Contains(detail, "back-off") {
		t.Errorf("an endpoint serving every method has a mark:\n%s", detail)
	}
}

// Over a real engine, in process and attached: a sim answering -32601 to
// eth_getLogs is marked, and the console shows it.
func TestView_CannotServeFromARealEngineShows(t *testing.T) {
	for _, name := range []string{"in-process", "attached"} {
		t.Run(name, func(t *testing.T) {
			// One endpoint, so the read reaches it whatever the ranking.
			r := newRig(t, "alpha")
			// geth's answer (the sim's default message, "missing trie
			// node", would make it the endpoint's error whatever the code).
			mode, code, methods := "rpc_error", -32601, []string{"eth_getLogs"}
			msg := "the method eth_getLogs does not exist/is not available"
			if err := r.sims[0].Apply(sim.ControlRequest{Mode: &mode, ErrorCode: &code, ErrorMessage: &msg, RPCErrorMethods: &methods}); err != nil {
				t.Fatal(err)
			}
			r.read(t, 1, "eth_getLogs")
			m := console(t, r.backends(t)[name], 100, 30, false)
			if ep := m.snap.Endpoints[0]; ep.Methods["eth_getLogs"].CannotServeUntil.IsZero() {
				t.Fatalf("the engine did not mark %s: %+v", ep.Name, ep.Methods)
			}
			if got := m.View(); !strings.Contains(got, "no eth_getLogs") {
				t.Errorf("no badge:\n%s", got)
			}
			if got := strings.Join(m.detailLines(200), "\n"); !strings.Contains(got, "cannot serve: eth_getLogs, asked after the endpoints that can until ") {
				t.Errorf("detail lacks the mark:\n%s", got)
			}
		})
	}
}
