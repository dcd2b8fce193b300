package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/themes"
)

// The endpoint table shows a canary's share and a shadow as badges, as it
// shows STANDBY; the detail of a shadow shows its comparison figures.
func TestView_CutoverBadgesAndShadowDetail(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 36}} {
		m := fixedModel(cutoverSnapshot(), themes.Default(), sz[0], sz[1])
		got := m.View()
		if !strings.Contains(got, "CANARY 5%") && !strings.Contains(got, "CAN 5%") || !strings.Contains(got, "SHADOW") && !strings.Contains(got, "SHD") {
			t.Fatalf("%dx%d lacks the role badges:\n%s", sz[0], sz[1], got)
		}
	}
	m := fixedModel(cutoverSnapshot(), themes.Default(), 120, 36)
	m = press(t, m, "down", "down", "enter")
	got := m.View()
	golden(t, filepath.Join("testdata", "cutover-detail_120x36.golden"), got)
	for _, want := range []string{"role shadow", "match 99.5%", "3 mismatch", "12 tip", "last mismatch eth_call 12s ago"} {
		if !strings.Contains(got, want) {
			t.Fatalf("shadow detail lacks %q:\n%s", want, got)
		}
	}
	menu := press(t, fixedModel(cutoverSnapshot(), themes.Default(), 80, 24), "down", "down", "r")
	golden(t, filepath.Join("testdata", "role-menu_80x24.golden"), menu.View())
}

// r opens the role menu on the selected endpoint; enter asks, saying what
// the change does; y changes the role through the backend, and the engine
// records a role event by the console.
func TestUpdate_RoleMenuAsksThenChangesTheRole(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r") // beta
		if m.overlay != overlayRole || !strings.Contains(m.View(), "Role of beta") {
			t.Fatalf("no role menu:\n%s", m.View())
		}
		m = press(t, m, "right", "right", "right", "down", "right", "enter") // canary, 10%
		if m.overlay != overlayConfirm || !strings.Contains(m.confirm.question, "beta becomes a canary: it takes 10% of reads' first attempts") {
			t.Fatalf("no confirmation saying what will happen: %q", m.confirm.question)
		}
		wantCalls(t, sp)
		m = press(t, m, "y")
		wantCalls(t, sp, "SetRole beta canary share=0.1")
		if ep := m.snap.Endpoints[1]; ep.Role != engine.RoleCanary || ep.Share != 0.1 || !strings.Contains(m.View(), "CANARY 10%") {
			t.Fatalf("role on screen %s %v:\n%s", ep.Role, ep.Share, m.View())
		}
		if ev := lastEvent(t, r); ev.Type != engine.EventRole || ev.Actor != engine.ActorConsole || ev.To != "canary 10%" {
			t.Fatalf("engine event %+v", ev)
		}
		m = press(t, m, "r", "esc")
		if m.overlay != overlayNone {
			t.Fatal("esc did not close the role menu")
		}
		wantCalls(t, sp)
	})
}

// The role key is off in a read-only console.
func TestUpdate_RoleKeyIsOffReadOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		m := console(t, sp, 100, 30, true)
		m = press(t, m, "r")
		if m.overlay == overlayRole || !strings.Contains(m.status.text, "read-only") {
			t.Fatalf("r in a read-only console: overlay %v, status %q", m.overlay, m.status.text)
		}
	})
}

// With nothing routable, the banner names a shadow's reason as such: it
// answers no client whatever its health.
func TestView_NoRoutableBannerSaysAShadowMirrorsOnly(t *testing.T) {
	r := newRig(t, "alpha", "beta")
	if _, err := r.eng.SetRole(engine.ActorAdmin, "beta", engine.RoleShadow, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.eng.Drain(engine.ActorAdmin, "alpha"); err != nil {
		t.Fatal(err)
	}
	m := console(t, Local{Engine: r.eng}, 160, 30, false)
	got := m.View()
	if !strings.Contains(got, "NO ROUTABLE ENDPOINT") || !strings.Contains(got, "alpha: drained; beta: shadow (mirrors only)") {
		t.Fatalf("banner lacks the shadow's reason:\n%s", got)
	}
}

// The role menu keeps an endpoint's exact share (a canary at 3% stays at
// 3%, not rounded to a preset) until the share field is moved; an endpoint
// that takes no share is offered 5%, a shadow too, and says so.
func TestUpdate_RoleMenuKeepsTheExactShareAndStartsAShadowAt5Percent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		share := 0.03
		if _, err := r.eng.SetRole(engine.ActorAdmin, "beta", engine.RoleCanary, &share); err != nil {
			t.Fatal(err)
		}
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "enter") // beta, unchanged
		if !strings.Contains(m.confirm.question, "beta becomes a canary: it takes 3% of reads' first attempts") {
			t.Fatalf("confirmation %q, want the exact 3%%", m.confirm.question)
		}
		m = press(t, m, "y")
		wantCalls(t, sp, "SetRole beta canary share=0.03")
		m = press(t, m, "r", "down", "right", "enter") // the share moved: the preset above 3%
		if !strings.Contains(m.confirm.question, "takes 5% of reads' first attempts") {
			t.Fatalf("confirmation after moving the share %q, want 5%%", m.confirm.question)
		}
		m = press(t, m, "y")
		wantCalls(t, sp, "SetRole beta canary share=0.05")
		m = press(t, m, "up", "r", "right", "right") // alpha, a primary → shadow
		if v := m.View(); !strings.Contains(v, "5% of reads mirrored (the menu starts here, not at every read)") {
			t.Fatalf("a new shadow's share in the menu:\n%s", v)
		}
	})
}

// A share means another thing in each role, so the endpoint's own is
// offered for its own role only: a shadow mirroring every read, moved to
// canary in the menu, is offered 5% of first attempts, not 100% (the
// roles audit: shadow 100% → canary kept 100%, every read's first attempt
// on the new provider at one keystroke). Back on shadow, its own 100%.
func TestUpdate_RoleMenuDoesNotCarryAShadowsShareToACanary(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		all := 1.0
		if _, err := r.eng.SetRole(engine.ActorAdmin, "beta", engine.RoleShadow, &all); err != nil {
			t.Fatal(err)
		}
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "right", "enter") // beta: shadow → canary
		if q := m.confirm.question; !strings.Contains(q, "beta becomes a canary: it takes 5% of reads' first attempts") {
			t.Fatalf("shadow 100%% → canary: confirmation %q, want 5%%", q)
		}
		m = press(t, m, "n", "r", "right", "left", "enter") // to canary and back
		if q := m.confirm.question; !strings.Contains(q, "100% of reads are mirrored") {
			t.Fatalf("back on its own role: confirmation %q, want its own 100%%", q)
		}
		m = press(t, m, "n", "r", "down", "left", "up", "right", "enter") // share moved to 50%, then canary
		if q := m.confirm.question; !strings.Contains(q, "it takes 50% of reads' first attempts") {
			t.Fatalf("share moved, then canary: confirmation %q, want the share picked (50%%)", q)
		}
		wantCalls(t, sp)
	})
}

// The role menu's question on a drained endpoint says the new role takes
// no request until it is undrained.
func TestUpdate_RoleMenuOnADrainedEndpointSaysItStaysDrained(t *testing.T) {
	forEachBackend(t, func(t *testing.T, r *rig, sp *spy) {
		if err := r.eng.Drain(engine.ActorAdmin, "beta"); err != nil {
			t.Fatal(err)
		}
		m := console(t, sp, 100, 30, false)
		m = press(t, m, "down", "r", "left", "enter") // beta: primary → canary
		if q := m.confirm.question; !strings.Contains(q, "It is drained: it takes no request until undrained (d).") {
			t.Fatalf("confirmation %q does not say beta stays drained", q)
		}
		m = press(t, m, "n", "up", "r", "left", "enter") // alpha, not drained
		if q := m.confirm.question; strings.Contains(q, "drained") {
			t.Fatalf("confirmation for alpha %q says drained", q)
		}
	})
}
